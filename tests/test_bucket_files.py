"""spamflow.bucket_files: the direct engines' stand-in for a shuffle, against grouping by hand."""

import numpy as np

from spamflow.bucket_files import BucketFiles

ROW = np.dtype([("key", "<u8"), ("value", "<u4")])


def test_rows_come_back_by_bucket_in_their_order_and_the_files_go(tmp_path):
    rng = np.random.default_rng(3)
    files = BucketFiles(tmp_path, "rows", ROW, 8)
    sent: list[tuple[int, int, int]] = []
    for _ in range(5):  # several appends, buckets unsorted, one already sorted
        bucket = rng.integers(0, 8, 300)
        if _ == 2:
            bucket.sort()
        key, value = rng.integers(0, 2**40, 300).astype(np.uint64), rng.integers(0, 2**31, 300).astype(np.uint32)
        files.append(bucket, key=key, value=value)
        sent += zip(bucket.tolist(), key.tolist(), value.tolist())
    files.write(5, key=np.array([1], np.uint64), value=np.array([2], np.uint32))
    sent.append((5, 1, 2))
    files.close()
    assert sum(files.size(b) for b in range(8)) == len(sent) * ROW.itemsize
    expected = {b: [(k, v) for bb, k, v in sent if bb == b] for b in range(8)}  # by hand: arrival order
    chunked = [(r["key"].tolist(), r["value"].tolist()) for r in files.take(3, chunk_rows=7)]
    assert all(len(keys) <= 7 for keys, _ in chunked)
    assert [kv for keys, values in chunked for kv in zip(keys, values)] == expected[3]
    rest = [b for b in range(8) if b != 3]
    got = list(files.take_all())
    assert [list(zip(r["key"].tolist(), r["value"].tolist())) for r in got] == [expected[b] for b in rest if expected[b]]
    assert not list(tmp_path.iterdir())
