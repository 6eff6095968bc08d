"""Pages that declare no charset and are not UTF-8: windows-1252 (WHATWG's fallback for
Western pages) unless the page is evidently in another legacy encoding.  Each page is
written in its legacy encoding with no declaration; the decoded text must equal the
original."""

from __future__ import annotations

import re
import tarfile

import pyarrow.parquet as pq
import pytest

from spamflow.parse.charset import decode_html
from spamflow.parse.legacy_charset import text_runs
from spamflow.parse.warc_file import parse_warc_file

from conftest import shared_data
from warc_factory import Resp, write_warc
from warc_factory import html as html_page

WESTERN = {
    "french": "La crème brûlée est servie à la française, avec des légumes frais. Où est le café? Le garçon "
              "répond qu'il a déjà fermé la fenêtre à côté de l'hôtel.",
    "spanish": "El niño comió una piña en la montaña. ¿Mañana irá al país vecino? ¡Sí! Su señora está en la "
               "estación con el camión del almacén.",
    "portuguese": "A educação e a informação são direitos de todos; não há razão para a exclusão dos cidadãos. "
                  "Você já viu o coração da função pública?",
    "german": "Größere Änderungen für Straßenbahnen über Brücken müssen geprüft werden. Die Bürger können ihre "
              "Vorschläge bis März einreichen, heißt es.",
    "italian": "Perché la città è così bella? Però non è facile trovare un caffè più buono. Lunedì sarà già "
               "tardi per la novità della società.",
    "catalan": "La col·lecció de l'església és molt àmplia. Què més podríem dir de la ciutat? Però també hi ha "
               "l'àvia que és aquí.",
    "danish": "Køb æbler og blåbær på torvet i Århus. Søndag går vi en tur ved søen, hvor det er så smukt, og "
              "spiser rødgrød med fløde.",
    "swedish": "Det är en vacker dag i Göteborg och vi åker båt på sjön. Många människor går på stränderna och "
               "äter glass på eftermiddagen.",
    # a French page naming Czech places: the letters windows-1250 would change are French ones
    "french-naming-czech-places": "Le ministre tchèque a visité Tábor, Písek, Šumava et Ústí; à Brno, il a "
                                  "rencontré des élèves très intéressés par l'économie et la fenêtre européenne.",
}
OTHER = {
    "czech": ("Příliš žluťoučký kůň úpěl ďábelské ódy. Čeština je krásný jazyk plný háčků a čárek, které "
              "dělají potíže cizincům.", "cp1250"),
    "polish": ("Zażółć gęślą jaźń. W Łodzi są piękne ulice, a do Krakowa przyjeżdża wielu turystów, żeby "
               "zobaczyć Wawel i Sukiennice.", "cp1250"),
    "polish-iso": ("Zażółć gęślą jaźń. W Łodzi są piękne ulice, a do Krakowa przyjeżdża wielu turystów, żeby "
                   "zobaczyć Wawel i Sukiennice.", "iso8859_2"),
    "hungarian": ("Árvíztűrő tükörfúrógép. A magyar nyelv szép és különleges, sok ékezetes betűvel, például ő "
                  "és ű hangokkal.", "cp1250"),
    "turkish": ("Türkçe çok güzel bir dildir. İstanbul'da yaşayan insanlar her gün boğazı geçer; şehir çok "
                "kalabalıktır ve ağaçlar yeşildir.", "cp1254"),
    "russian": ("Съешь же ещё этих мягких французских булок, да выпей чаю. Москва большой город, и в нём "
                "живут миллионы людей.", "cp1251"),
    "russian-koi8": ("Съешь же ещё этих мягких французских булок, да выпей чаю. Москва большой город, и в нём "
                     "живут миллионы людей.", "koi8_r"),
    "greek": ("Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. Η Αθήνα είναι όμορφη πόλη με "
              "πολλά μνημεία.", "cp1253"),
    "hebrew": ("עברית היא שפה שמית. ירושלים היא עיר עתיקה עם היסטוריה ארוכה, ורבים מבקרים בה בכל שנה.",
               "cp1255"),
    "arabic": ("اللغة العربية لغة جميلة. القاهرة مدينة كبيرة ويعيش فيها ملايين الناس، وفيها الكثير من "
               "المساجد القديمة.", "cp1256"),
    "japanese": ("日本語のテキストです。東京は大きな都市で、多くの人が住んでいます。", "shift_jis"),
    "japanese-euc": ("日本語のテキストです。東京は大きな都市で、多くの人が住んでいます。", "euc_jp"),
    "chinese": ("中文文本的例子。北京是中国的首都，有很多历史古迹。", "gb18030"),
    "korean": ("한국어 텍스트입니다. 서울은 큰 도시이고 많은 사람들이 삽니다.", "euc_kr"),
}


def _page(text: str) -> str:
    return f"<!doctype html><html><head><title>t</title></head><body><p>{text}</p></body></html>"


@pytest.mark.parametrize("language", sorted(WESTERN))
def test_undeclared_western_page_is_windows_1252(language):
    page = _page(WESTERN[language])
    decoded = decode_html(page.encode("cp1252"), "text/html")
    assert decoded.text == page
    assert (decoded.charset, decoded.source, decoded.errors) == ("cp1252", "fallback", 0)


@pytest.mark.parametrize("language", sorted(OTHER))
def test_undeclared_page_evidently_in_another_legacy_encoding_is_detected(language):
    text, codec = OTHER[language]
    page = _page(text)
    decoded = decode_html(page.encode(codec), "text/html")
    assert decoded.text == page
    assert decoded.source == "detected" and decoded.errors == 0


def test_a_few_accented_letters_are_too_little_to_leave_windows_1252():
    page = _page("Le café est noir et très chaud.")  # 3 non-ASCII letters
    assert decode_html(page.encode("cp1252")).text == page
    # even when they are in fact windows-1250: too little evidence to leave the fallback
    assert decode_html(_page("Jiří a Tomáš").encode("cp1250")).charset == "cp1252"


def test_text_runs_take_text_between_tags_not_code():
    body = b"<p>caf\xe9 ok</p><script>var s='\xff\xfe';</script>\n<b>na\xefve</b> x\n<i>plain</i>"
    assert text_runs(body) == b"caf\xe9 ok\nna\xefve"


# Real pages (html-mozilla-readability, html-trafilatura-eval), their charset declaration
# removed, written in their language's legacy encoding.  Characters that encoding lacks
# are dropped first; the expected text is the legacy bytes read in that encoding.
_READABILITY = {
    "test-pages/lemonde-1/source.html": "cp1252",  # French
    "test-pages/la-nacion/source.html": "cp1252",  # Spanish
    "test-pages/folha/source.html": "cp1252",  # Portuguese (Brazil)
    "test-pages/heise/source.html": "cp1252",  # German
    "test-pages/aktualne/source.html": "cp1250",  # Czech
    "test-pages/hukumusume/source.html": "shift_jis",  # Japanese
    "test-pages/gmw/source.html": "gb18030",  # Chinese
}
_TRAFILATURA = {
    "eval/Ile jest warta godzina pracy_ W tych krajach praca popłaca - Forsal.pl.html": "cp1250",  # Polish
    "eval/mindmegette.hu.levagott.html": "cp1250",  # Hungarian
    "cache/laviedesidees.fr.evaluation.html": "cp1252",  # French
    "eval/cybercook.com.br.sequilho.html": "cp1252",  # Portuguese
}
_META_CHARSET = re.compile(r"<meta[^>]+?charset\s*=[^>]*>", re.I)


def _real_pages(archive: str, members: dict[str, str]) -> list[tuple[str, str, str]]:
    with tarfile.open(shared_data(*archive.split("/"))) as tar:
        return [(name, codec, tar.extractfile(name).read().decode("utf-8")) for name, codec in members.items()]


@pytest.mark.parametrize("archive,members", [
    ("html-mozilla-readability/readability-test-pages.tar.xz", _READABILITY),
    ("html-trafilatura-eval/trafilatura-tests-html.tar.xz", _TRAFILATURA),
], ids=["readability", "trafilatura"])
@pytest.mark.slow
def test_real_pages_in_their_legacy_encoding_without_a_declaration(archive, members):
    for name, codec, html in _real_pages(archive, members):
        html = _META_CHARSET.sub("", html)
        letters = [c for c in html if ord(c) > 127 and c.isalpha()]
        kept = [c for c in letters if c.encode(codec, "ignore")]
        assert len(kept) >= 0.99 * len(letters) and len(kept) >= 100, f"{name} is not a {codec} page"
        legacy = html.encode(codec, "ignore")
        decoded = decode_html(legacy, "text/html")
        assert decoded.charset.replace("-", "_") in (codec, {"shift_jis": "cp932"}.get(codec)), name
        assert decoded.text == legacy.decode(codec), name


def test_parse_gives_undeclared_pages_their_words_and_counts_how_they_were_decoded(tmp_path):
    french = _page("Crème brûlée à la française: le garçon a déjà goûté la pâte feuilletée.").encode("cp1252")
    czech = _page(OTHER["czech"][0]).encode("cp1250")
    declared = _page("Café crème").encode("cp1252")
    write_warc(tmp_path / "in.warc.gz", [Resp("http://fr.example.com/", french, content_type="text/html"),
                                         Resp("http://cz.example.com/", czech, content_type="text/html"),
                                         Resp("http://d.example.com/", declared,
                                              content_type="text/html; charset=windows-1252")])
    result = parse_warc_file(tmp_path / "in.warc.gz", "2026-01", tmp_path / "out.parquet", max_bytes=100_000)
    rows = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert [r["charset"] for r in rows] == ["cp1252", "cp1250", "cp1252"] and not result.bad_records
    assert rows[0]["words"] == ["crème", "brûlée", "à", "la", "française", "le", "garçon", "a", "déjà", "goûté",
                                "la", "pâte", "feuilletée"]
    assert rows[1]["words"][:4] == ["příliš", "žluťoučký", "kůň", "úpěl"]
    assert result.counts["charset_fallback"] == 1 and result.counts["charset_detected"] == 1


@pytest.mark.parametrize("label", ["utf\x00-8", "utf-8\x00", "base64", "rot13", "zlib", "undefined", "idna",
                                   "unicode_escape", "x" * 5000])
def test_a_charset_label_that_names_no_page_encoding_is_ignored_not_fatal(label):
    body = "<html><body><p>caf\u00e9 \\u0041</p></body></html>".encode()
    decoded = decode_html(body, f"text/html; charset={label}")
    assert decoded.text == body.decode() and decoded.source == "utf-8"
    meta = b'<html><head><meta charset="' + label.encode("latin-1") + b'"></head><body>caf\xc3\xa9</body></html>'
    assert "caf\u00e9" in decode_html(meta).text


def test_parse_keeps_a_page_with_a_nul_in_its_charset(tmp_path):
    warc = tmp_path / "nul.warc.gz"
    write_warc(warc, [Resp("http://a.example.com/", html_page("t", "<p>kept words</p>"),
                           content_type="text/html; charset=utf-8\x00")])
    result = parse_warc_file(warc, "2026-01", tmp_path / "out.parquet", max_bytes=100_000)
    assert not result.bad_records and result.counts["pages"] == 1
    assert pq.read_table(tmp_path / "out.parquet").to_pylist()[0]["words"] == ["kept", "words"]
