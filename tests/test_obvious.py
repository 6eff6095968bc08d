"""The built-in ``obvious`` plugin against hand counts and the official WEBSPAM-UK2007 values."""

from __future__ import annotations

import gzip

import pyarrow as pa

from spamflow_obvious.features import obvious_features

from conftest import shared_data


def test_counts_pages_per_snapshot_and_host():
    pages = pa.table({"snapshot": ["s1", "s1", "s1", "s2", "s1"],
                      "host": ["a.example.co.uk", "b.example.com", "a.example.co.uk", "a.example.co.uk", "ünï.example"]})
    assert obvious_features(pages).to_pylist() == [
        {"snapshot": "s1", "host": "a.example.co.uk", "number_of_pages": 2, "length_of_hostname": 15},
        {"snapshot": "s1", "host": "b.example.com", "number_of_pages": 1, "length_of_hostname": 13},
        {"snapshot": "s1", "host": "ünï.example", "number_of_pages": 1, "length_of_hostname": 11},  # characters, not bytes
        {"snapshot": "s2", "host": "a.example.co.uk", "number_of_pages": 1, "length_of_hostname": 15},
    ]


def test_matches_the_official_uk2007_obvious_features():
    folder = shared_data("webspam-uk2007")
    names = {}
    with gzip.open(folder / "labels" / "WEBSPAM-UK2007-hostnames.txt.gz", "rt") as fh:
        for line in fh:
            hostid, host = line.split()
            names[int(hostid)] = host
    official = {}
    with gzip.open(folder / "features-train-only" / "uk-2007-05.obvious_features.csv.train.arff.gz", "rt") as fh:
        rows = [line.strip() for line in fh if line[:1].isdigit()]
    for row in rows:
        hostid, pages, length = row.split(",")[:3]
        official[names[int(hostid)]] = (int(float(pages)), int(float(length)))
    assert len(official) > 3900
    hosts = [h for h, (n, _) in official.items() for _ in range(n)]
    ours = obvious_features(pa.table({"snapshot": ["2007-05"] * len(hosts), "host": hosts}))
    got = {r["host"]: (r["number_of_pages"], r["length_of_hostname"]) for r in ours.to_pylist()}
    assert got == official
