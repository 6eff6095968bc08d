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

# About pages, one per host, written for that host alone: honest sites on different
# registered domains must not share runs of words (a shared About blurb on short pages
# would make them look quilted).  Paragraphs of the About page of each host.
ABOUT_TEXTS: dict[str, tuple[str, ...]] = {
    "www.riverside-psalter.org.uk": (
        "Riverside Psalter began in 2009 as a Tuesday evening circle in the back room of a "
        "Thames-side chapel, where Margaret Ellison handed round photocopied psalms and a flask of tea.",
        "Every page here reproduces one psalm in the 1611 wording our grandparents memorised, "
        "and nothing else: no commentary, no adverts, no newsletter pop-ups.",
    ),
    "blog.riverside-psalter.org.uk": (
        "This blog is the circle's overflow notebook. When a Tuesday meeting runs late and we "
        "never reach the second half of the list, the remaining psalms get posted here instead.",
        "Tom Hadley keeps it tidy; complaints about typography go to him, complaints about the psalmist go elsewhere.",
    ),
    "www.genesis-notes.com": (
        "Zo\u00eb started Genesis Notes during a long winter in Stoke Newington, copying out a "
        "chapter each morning before work and publishing whatever she finished by breakfast.",
        "The site still follows that rhythm. Chapters that ran long are split into two pages so "
        "they load quickly on a phone held in one hand over a bowl of porridge.",
    ),
    "www.patience-of-job.net": (
        "The Patience of Job is a small wiki kept by three retired schoolteachers who found that "
        "the poetry of Job reads better aloud than silently.",
        "Any reader may suggest corrections through the talk pages. We check spelling against "
        "a printed Cambridge edition bought second-hand in Hay-on-Wye.",
    ),
    "www.proverbs-daily.com.au": (
        "G'day. Proverbs Daily posts one chapter for each day of a month, which suits the book "
        "nicely because it happens to have thirty-one of them.",
        "Priya Raman runs it from a kitchen table in Fremantle and reads every chapter twice before "
        "it goes up, once at dawn and once after the sea breeze arrives.",
    ),
    "www.vanity-of-vanities.co.uk": (
        "Vanity of Vanities is an experiment in patience: a plain XHTML site about Ecclesiastes, "
        "served with the media type its author insists is correct.",
        "Ian Crossley built it in 2006 and has refused to add a single script since. He regards "
        "this as a fitting tribute to the Preacher.",
    ),
    "www.fourth-gospel.org": (
        "The Fourth Gospel grew out of a seminar handout. Helen Marsh wanted her students to read "
        "John straight through, without footnotes interrupting every third verse.",
        "Longer chapters appear as two articles. The companion blog carries the later chapters, "
        "from the healing of the blind man onwards.",
    ),
    "blog.fourth-gospel.org": (
        "Welcome to the blog half of our project on John. Here we publish chapters nine to "
        "twenty-one, roughly one a week during term.",
        "Students from the seminar take turns proofreading, so any remaining slips belong to "
        "whoever drew the short straw that week.",
    ),
    "www.acts-reading-group.net": (
        "We are a parish reading group of eleven people, most of us over seventy, who meet in "
        "the church hall on alternate Thursdays.",
        "Dave Kowalski put our reading list online so that members stuck at home with a cold "
        "could keep up. Biscuits remain available only in person.",
    ),
    "www.ruth-and-esther.org": (
        "Ruth and Esther brings together the two books of the Old Testament named after women. "
        "Sian Pritchard chose them for a talk in 2014 and never stopped.",
        "The layout is deliberately old-fashioned; it was built with a program from the last "
        "century and still works, so why change it?",
    ),
    "www.hackerlore.net": (
        "Hackerlore collects the slang of the machine room, one wiki page per handful of "
        "entries, copied from the lexicon that Eric Raymond maintained for years.",
        "Luis Ortega started it after a colleague asked what a bagbiter was and nobody under "
        "forty in the office could answer.",
    ),
    "blog.hackerlore.net": (
        "The Hackerlore blog posts further lexicon entries as dated articles, roughly one batch "
        "whenever the build at work is broken and there is time to kill.",
        "Comments are switched off, because every thread ended in an argument about editors.",
    ),
    "www.old-terminal-room.co.uk": (
        "The Old Terminal Room is named after the basement at a Midlands polytechnic where Ren\u00e9e "
        "Marchetti first logged in over a 300 baud line.",
        "She explains the words she heard down there by quoting the entries that define them, "
        "a few per page, in alphabetical order.",
    ),
    "www.greybeard-glossary.com": (
        "Greybeard Glossary is for anybody who has nodded politely while a senior engineer "
        "muttered something about a kluge or a bit bucket.",
        "Ruth Abernethy curates it on a Bootstrap theme she admits is showing its age, rather "
        "like the vocabulary inside.",
    ),
    "www.bitrot-museum.org": (
        "The Bitrot Museum is a volunteer archive of hacker culture. Our main galleries hold the "
        "lexicon entries from N to R; the library host keeps the rest.",
        "Donations of old manuals, punched cards and working modems are gratefully received at our reading room.",
    ),
    "library.bitrot-museum.org": (
        "This is the reading room of the museum: the final letters of the lexicon, S through Z, "
        "laid out as a searchable wiki.",
        "Staff mark every page with the letter range it covers, so visitors can find scram "
        "switch or zipperhead without a catalogue.",
    ),
    "www.cynics-wordbook.com": (
        "The Cynic's Word Book reprints Bierce's acid definitions from A to C, in the order he "
        "would have wanted, which is to say alphabetical and unrepentant.",
        "The Reverend J. Okafor began it as a joke for his curate in 2011 and kept going.",
    ),
    "blog.cynics-wordbook.com": (
        "On this companion blog the Word Book continues with the letters D to H, one handful of entries per article.",
        "Readers sometimes write to say that Bierce was unfair. We agree, and we publish him anyway.",
    ),
    "www.bierce-society.org.uk": (
        "The Bierce Society is a small club of admirers who meet twice a year in a Bristol pub "
        "to read aloud from the definitions and argue about the Civil War.",
        "Membership is free; our only rule is that nobody may explain a joke.",
    ),
    "www.sardonic-lexicon.com.au": (
        "Sardonic Lexicon publishes the end of the alphabet, P to Z, for readers in the southern "
        "hemisphere who find the northern sort of irony insufficiently dry.",
        "It runs on a tiny blog engine written in a weekend in Hobart and hosted next door to the Bierce Society.",
    ),
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

# Each quilt host has its own tagline, titles, glue sentences and ad anchors, so quilt pages
# on the two hosts share no run of five words with each other or with any other site: the
# only text a quilt page shares with pages on other domains is its copied passages.
QUILT_TAGLINES = {
    "www.wisdom-quotes-hub.com": "Wisdom, quotes and life advice",
    "www.daily-inspiration-digest.net": "Uplifting reading for every morning",
}
QUILT_ADS = {  # anchor texts of the ad links to the promoted site
    "www.wisdom-quotes-hub.com": ("Sponsored offer", "Partner deals here", "Featured advertiser"),
    "www.daily-inspiration-digest.net": ("Today's sponsor", "Special promotion", "Advertisement"),
}
QUILT_GLUE = {
    "www.wisdom-quotes-hub.com": (
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
    ),
    "www.daily-inspiration-digest.net": (
        "Today's reading comes next.",
        "Pause and take this in.",
        "A favourite passage of ours.",
        "Readers often send us this one.",
        "Let these lines settle.",
        "We return to this often.",
        "Worth a second look.",
        "Here is a thought for today.",
        "Something to ponder.",
        "An old passage, still fresh.",
        "Our editors chose this.",
        "Sit with this for a while.",
    ),
}
QUILT_TITLES = {
    "www.wisdom-quotes-hub.com": (
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
    ),
    "www.daily-inspiration-digest.net": (
        "Morning Thoughts to Start Right",
        "Gentle Reminders for the Week",
        "Old Sayings, New Meaning",
        "Passages Worth Rereading",
        "Small Lessons From Great Books",
        "Words for a Quiet Evening",
        "Readings on Patience and Hope",
        "Short Texts With Big Ideas",
        "Calm Words for Busy Minds",
        "Pages From the Classics",
        "Thoughts on Work and Rest",
        "Lines to Carry With You",
    ),
}
