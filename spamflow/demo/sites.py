"""Who is who in the synthetic web: fictional hosts, their IPs, topics and templates.

Kept apart from ``build.py`` so the cast can be read (and changed) at a glance.
IPs are in 127.0.0.0/8 so the crawler demo can serve every host on its own loopback
address; hosts share an IP where that is realistic (shared hosting, blog platforms).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HonestSite:
    domain: str  # registered domain (under a real public suffix)
    name: str  # site name shown on pages
    tagline: str
    ip: str
    hosts: tuple[tuple[str, str, str], ...]  # (host label, text collection, template)
    xhtml_mime: bool = False  # serve as application/xhtml+xml


HONEST_SITES: tuple[HonestSite, ...] = (
    HonestSite(
        "riverside-psalter.org.uk",
        "Riverside Psalter",
        "Reading the Psalms together",
        "127.10.0.1",
        (("www", "kjv-psalms-a", "classic-table"), ("blog", "kjv-psalms-b", "minimal-blog")),
    ),
    HonestSite(
        "genesis-notes.com",
        "Genesis Notes",
        "Chapter by chapter through the first book",
        "127.10.0.2",
        (("www", "kjv-genesis", "semantic-html5"),),
    ),
    HonestSite(
        "patience-of-job.net",
        "The Patience of Job",
        "A study of the Book of Job",
        "127.10.0.2",
        (("www", "kjv-job", "wiki-like"),),
    ),
    HonestSite(
        "proverbs-daily.com.au",
        "Proverbs Daily",
        "A chapter of wisdom a day",
        "127.10.0.3",
        (("www", "kjv-proverbs", "minimal-blog"),),
    ),
    HonestSite(
        "vanity-of-vanities.co.uk",
        "Vanity of Vanities",
        "The Preacher, chapter by chapter",
        "127.10.0.4",
        (("www", "kjv-ecclesiastes", "xhtml-strict"),),
        xhtml_mime=True,
    ),
    HonestSite(
        "fourth-gospel.org",
        "The Fourth Gospel",
        "Notes on the Gospel of John",
        "127.10.0.5",
        (("www", "kjv-john-a", "bootstrap-grid"), ("blog", "kjv-john-b", "semantic-html5")),
    ),
    HonestSite(
        "acts-reading-group.net",
        "Acts Reading Group",
        "Our parish group reads Acts",
        "127.10.0.6",
        (("www", "kjv-acts", "semantic-html5"),),
    ),
    HonestSite(
        "ruth-and-esther.org",
        "Ruth and Esther",
        "Two short books, two remarkable women",
        "127.10.0.6",
        (("www", "kjv-ruth-esther", "classic-table"),),
    ),
    HonestSite(
        "hackerlore.net",
        "Hackerlore",
        "Words from the machine room",
        "127.10.0.7",
        (("www", "jargon-ab", "wiki-like"), ("blog", "jargon-cd", "minimal-blog")),
    ),
    HonestSite(
        "old-terminal-room.co.uk",
        "The Old Terminal Room",
        "Computing slang, explained",
        "127.10.0.8",
        (("www", "jargon-eh", "minimal-blog"),),
    ),
    HonestSite(
        "greybeard-glossary.com",
        "Greybeard Glossary",
        "What the old hands meant",
        "127.10.0.8",
        (("www", "jargon-im", "bootstrap-grid"),),
    ),
    HonestSite(
        "bitrot-museum.org",
        "The Bitrot Museum",
        "Hacker culture, preserved",
        "127.10.0.9",
        (("www", "jargon-nr", "semantic-html5"), ("library", "jargon-sz", "wiki-like")),
    ),
    HonestSite(
        "cynics-wordbook.com",
        "The Cynic's Word Book",
        "Bierce's definitions, one letter at a time",
        "127.10.0.10",
        (("www", "devil-ac", "classic-table"), ("blog", "devil-dh", "bootstrap-grid")),
    ),
    HonestSite(
        "bierce-society.org.uk",
        "The Bierce Society",
        "Ambrose Bierce for modern readers",
        "127.10.0.11",
        (("www", "devil-io", "xhtml-strict"),),
    ),
    HonestSite(
        "sardonic-lexicon.com.au",
        "Sardonic Lexicon",
        "A dictionary for the disillusioned",
        "127.10.0.11",
        (("www", "devil-pz", "minimal-blog"),),
    ),
)

# Site footers; two carry non-ASCII names so the charset pages have characters that
# differ between encodings.
FOOTERS = {
    "old-terminal-room.co.uk": "\u00a9 2011\u20132026 Ren\u00e9e Marchetti \u2014 \u201cno warranty, express or implied\u201d",  # noqa: E501
    "genesis-notes.com": "\u00a9 2026 Zo\u00eb L\u00e9ger, Stoke Newington \u00b7 donations of \u00a35 welcome",
}

FOUNDERS = (
    "Margaret Ellison",
    "Tom Hadley",
    "Priya Raman",
    "the Reverend J. Okafor",
    "Ian Crossley",
    "Helen Marsh",
    "Dave Kowalski",
    "Sian Pritchard",
    "Luis Ortega",
    "Ruth Abernethy",
)
SOURCE_NOTES = {
    "kjv": "We use the King James Version of 1611.",
    "jargon": "Definitions come from the public-domain Jargon File.",
    "devil": "Entries are from Ambrose Bierce's dictionary of 1911.",
}

# Special pages: (host, index of the content page).
WINDOWS_1252_PAGE = ("www.old-terminal-room.co.uk", 0)  # charset only in the HTTP header
LATIN1_PAGE = ("www.genesis-notes.com", 1)  # charset only in <meta charset>
BOM_PAGE = ("www.patience-of-job.net", 2)  # UTF-8 with a byte-order mark
NOT_FOUND = ("www.acts-reading-group.net", "/topics/old-reading-plan.html")

# ----------------------------------------------------------------------------- spam
PROMOTED_HOST = "www.best-deals-direct.com"
PROMOTED_IP = "127.50.0.1"

QUILT_HOSTS = (
    ("www.wisdom-quotes-hub.com", "127.30.0.1", "Wisdom Quotes Hub"),
    ("www.daily-inspiration-digest.net", "127.30.0.2", "Daily Inspiration Digest"),
)

FARM_IPS = ("127.66.0.1", "127.66.0.2", "127.66.0.3")
# (host, keyword pool).  Snapshot 1 uses the first 15; snapshot 2 drops the first 3 and adds the last 3.
FARM_HOSTS = (
    ("www.cheap-loans-now.com", "loans"),
    ("www.best-casino-bonus.info", "casino"),
    ("www.replica-watch-deals.co.uk", "watches"),
    ("www.diet-pills-review.org", "diet"),
    ("www.car-insurance-quotes.biz", "insurance"),
    ("www.payday-cash-fast.net", "loans"),
    ("online-pokies.com.au", "casino"),
    ("www.ringtones-free-download.net", "ringtones"),
    ("www.cheap-flights-today.info", "travel"),
    ("www.debt-relief-experts.us", "loans"),
    ("www.luxury-watch-outlet.com", "watches"),
    ("www.fat-burner-secrets.co.uk", "diet"),
    ("www.cheap-hotel-deals.com.au", "travel"),
    ("www.bingo-bonus-codes.org.uk", "casino"),
    ("www.quote-insurance-online.net", "insurance"),
    ("www.mobile-tones-4u.info", "ringtones"),
    ("www.low-rate-mortgages.org", "loans"),
    ("slots-jackpot-online.net", "casino"),
)
FARM_SNAPSHOT_HOSTS = {"2026-01": FARM_HOSTS[:15], "2026-02": FARM_HOSTS[3:]}

KEYWORD_POOLS = {
    "loans": "cheap loans|payday loans|instant cash|bad credit loans|loan approval|no credit check|personal loans|fast cash advance|low interest|quick loans online|cash today|debt consolidation",  # noqa: E501
    "casino": "online casino|free spins|casino bonus|best slots|poker online|jackpot|roulette|no deposit bonus|blackjack|casino games|bingo bonus|win real money",  # noqa: E501
    "watches": "replica watches|luxury watches|cheap rolex|swiss replica|designer watches|watch sale|best replica|discount watches|watches online|gold watch|chronograph deals|watch outlet",  # noqa: E501
    "diet": "diet pills|lose weight fast|fat burner|weight loss|slimming tablets|appetite suppressant|diet supplements|burn fat|detox tea|lose belly fat|best diet|keto pills",  # noqa: E501
    "insurance": "car insurance|cheap insurance|insurance quotes|auto insurance|compare insurance|low cost cover|insurance online|young driver insurance|van insurance|home insurance|life cover|instant quote",  # noqa: E501
    "ringtones": "free ringtones|mp3 ringtones|ringtone download|mobile tones|polyphonic ringtones|free wallpapers|phone themes|top ringtones|funny ringtones|cheap ringtones|ringtones online|ringtone maker",  # noqa: E501
    "travel": "cheap flights|last minute deals|hotel deals|cheap hotels|holiday packages|flight tickets|budget travel|discount airfare|cheap holidays|travel deals|book hotels online|city breaks",  # noqa: E501
}
FARM_FILLER = "best|top|cheap|online|free|2026|discount|buy|now|guaranteed|official|compare|reviews|deals|uk|australia|fast|instant"  # noqa: E501

SPIN_PLATFORMS = {"quillpress.net": "127.40.0.1", "blogvine.org": "127.40.0.2", "scribblehub.com.au": "127.40.0.3"}
# 15 copies in snapshot 1, two more posted by snapshot 2.
SPIN_HOSTS = (
    ("marthas-corner.quillpress.net", "127.40.0.1"),
    ("techie-tom.quillpress.net", "127.40.0.1"),
    ("green-living-tips.quillpress.net", "127.40.0.1"),
    ("bookworm-betty.quillpress.net", "127.40.0.1"),
    ("daily-musings.blogvine.org", "127.40.0.2"),
    ("word-nerd.blogvine.org", "127.40.0.2"),
    ("reading-nook.blogvine.org", "127.40.0.2"),
    ("trivia-train.blogvine.org", "127.40.0.2"),
    ("lit-snippets.scribblehub.com.au", "127.40.0.3"),
    ("quiet-reader.scribblehub.com.au", "127.40.0.3"),
    ("www.classic-books-blog.com", "127.41.0.1"),
    ("www.literary-fun-facts.net", "127.41.0.2"),
    ("www.old-books-new-eyes.org", "127.41.0.3"),
    ("www.wordsmith-weekly.info", "127.41.0.4"),
    ("www.readers-digest-online.co.uk", "127.41.0.5"),
    ("page-turner.blogvine.org", "127.40.0.2"),
    ("www.bookish-banter.com", "127.41.0.6"),
)
SPIN_SNAPSHOT_HOSTS = {"2026-01": SPIN_HOSTS[:15], "2026-02": SPIN_HOSTS}
SPIN_TITLE = "How The Devil's Dictionary came to be"

QUILT_GLUE = (
    "Here is what you need to know.",
    "Many readers ask about this.",
    "Consider the following.",
    "Experts agree on this point.",
    "This is worth remembering.",
    "Read on for more.",
    "As one writer put it.",
    "Another view is worth quoting.",
    "The details matter here.",
    "This explains a great deal.",
    "Keep this in mind.",
    "It is often said.",
)
QUILT_TITLES = (
    "Top Wisdom Quotes for Every Day",
    "Inspiring Words to Live By",
    "The Best Sayings Ever Written",
    "Ancient Wisdom for Modern Life",
    "Words That Will Change Your Day",
    "Famous Lines Everyone Should Know",
    "Timeless Advice From the Past",
    "Quotes to Make You Think",
    "Classic Texts Explained Simply",
    "Life Lessons From Old Books",
    "Wise Words for Hard Times",
    "Daily Reading for Busy People",
)
