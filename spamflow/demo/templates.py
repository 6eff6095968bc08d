"""HTML templates of the synthetic web.

Honest sites use six genuinely different hand-made templates (tag structure, doctype,
indentation, attribute quoting, class names, scripts) plus per-site variation, so their
"HTML noise" (the non-alphanumeric characters HSS fingerprints, Urvoy et al. 2006) differs.
All link-farm pages come from ONE template (``farm``); that shared skeleton is what HSS finds.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .texts import Section


@dataclass(frozen=True)
class Link:
    href: str  # exactly as written in the page (may be relative)
    text: str
    nofollow: bool = False


@dataclass(frozen=True)
class Style:
    """Per-site variation inside one template."""

    indent: str = "  "
    quote: str = '"'
    prefix: str = "site"
    accent: str = "#336699"


@dataclass
class PageContext:
    site_name: str
    title: str
    sections: Sequence[Section]
    nav: Sequence[Link]
    outlinks: Sequence[Link] = ()
    listing: Sequence[Link] = ()  # home pages: links to the site's articles
    footer: str = ""
    tagline: str = ""
    meta_charset: str | None = "utf-8"  # None: no in-document declaration
    style: Style = field(default_factory=Style)
    extra_html: str = ""  # ads, promoted links (spam templates)


def esc(s: str) -> str:
    return html.escape(s, quote=False)


def _a(link: Link, q: str, cls: str | None = None) -> str:
    rel = f" rel={q}nofollow{q}" if link.nofollow else ""
    c = f" class={q}{cls}{q}" if cls else ""
    return f"<a href={q}{html.escape(link.href)}{q}{c}{rel}>{esc(link.text)}</a>"


def _paras(sections: Sequence[Section], ind: str, hd: str = "h2", attr: str = "") -> list[str]:
    out = []
    for s in sections:
        if s.heading:
            out.append(f"{ind}<{hd}>{esc(s.heading)}</{hd}>")
        out.extend(f"{ind}<p{attr}>{esc(p)}</p>" for p in s.paragraphs)
    return out


def _meta(ctx: PageContext, xhtml: bool = False) -> str:
    if not ctx.meta_charset:
        return ""
    end = " />" if xhtml else ">"
    return f'<meta charset="{ctx.meta_charset}"{end}'


# ------------------------------------------------------------------ honest templates
def classic_table(ctx: PageContext) -> str:
    """Late-1990s table layout: HTML 4.01 Transitional, upper-case tags, bgcolor, <FONT>."""
    s, q, i = ctx.style, ctx.style.quote, ctx.style.indent
    rows = [
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">',
        "<HTML>",
        "<HEAD>",
        f"<TITLE>{esc(ctx.title)} - {esc(ctx.site_name)}</TITLE>",
    ]
    if ctx.meta_charset:
        rows.append(f'<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset={ctx.meta_charset}">')
    rows += [
        "</HEAD>",
        f"<BODY BGCOLOR={q}#FFFFF0{q} TEXT={q}#000000{q} LINK={q}{s.accent}{q}>",
        f"<TABLE WIDTH={q}100%{q} BORDER={q}0{q} CELLPADDING={q}4{q}>",
        f"<TR><TD COLSPAN={q}2{q} BGCOLOR={q}{s.accent}{q}><FONT FACE={q}Georgia{q} SIZE={q}+2{q} COLOR={q}white{q}><B>{esc(ctx.site_name)}</B></FONT></TD></TR>",  # noqa: E501
        f"<TR><TD WIDTH={q}20%{q} VALIGN={q}top{q}>",
    ]
    rows += [f"{i}{_a(ln, q)}<BR>" for ln in ctx.nav]
    rows += ["</TD>", f"<TD VALIGN={q}top{q}>", f"{i}<H1>{esc(ctx.title)}</H1>"]
    rows += _paras(ctx.sections, i, "H3")
    if ctx.listing:
        rows += [f"{i}<UL>"] + [f"{i}{i}<LI>{_a(ln, q)}" for ln in ctx.listing] + [f"{i}</UL>"]
    if ctx.outlinks:
        rows += [f"{i}<P><I>See also:</I> " + " | ".join(_a(ln, q) for ln in ctx.outlinks) + "</P>"]
    rows += [
        ctx.extra_html,
        "</TD></TR>",
        f"<TR><TD COLSPAN={q}2{q}><HR><FONT SIZE={q}-1{q}>{esc(ctx.footer)}</FONT></TD></TR>",
        "</TABLE>",
        '<SCRIPT LANGUAGE="JavaScript">\n<!--\nif (top != self) { top.location = self.location; }\n// -->\n</SCRIPT>',
        "</BODY>",
        "</HTML>",
    ]
    return "\n".join(r for r in rows if r) + "\n"


def semantic_html5(ctx: PageContext) -> str:
    """Modern semantic HTML5 with BEM class names and a JSON-LD block."""
    s, q, i = ctx.style, ctx.style.quote, ctx.style.indent
    p = s.prefix
    rows = [
        "<!doctype html>",
        f"<html lang={q}en-GB{q}>",
        "<head>",
        f"{i}{_meta(ctx)}",
        f"{i}<meta name={q}viewport{q} content={q}width=device-width, initial-scale=1{q}>",
        f"{i}<title>{esc(ctx.title)} | {esc(ctx.site_name)}</title>",
        f"{i}<link rel={q}stylesheet{q} href={q}/static/{p}.css{q}>",
        f'{i}<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "WebPage", "name": "{html.escape(ctx.title)}"}}</script>',  # noqa: E501
        "</head>",
        f"<body class={q}{p}-body{q}>",
        f"{i}<header class={q}{p}-header{q}>",
        f"{i}{i}<p class={q}{p}-header__brand{q}>{esc(ctx.site_name)}</p>",
        f"{i}{i}<nav class={q}{p}-header__nav{q}>",
        f"{i}{i}{i}<ul>",
    ]
    rows += [f"{i * 4}<li class={q}{p}-nav__item{q}>{_a(ln, q, p + '-nav__link')}</li>" for ln in ctx.nav]
    rows += [
        f"{i}{i}{i}</ul>",
        f"{i}{i}</nav>",
        f"{i}</header>",
        f"{i}<main class={q}{p}-main{q}>",
        f"{i}{i}<article class={q}{p}-article{q}>",
        f"{i * 3}<h1 class={q}{p}-article__title{q}>{esc(ctx.title)}</h1>",
    ]
    rows += _paras(ctx.sections, i * 3)
    if ctx.listing:
        rows += (
            [f"{i * 3}<ol class={q}{p}-list{q}>"]
            + [f"{i * 4}<li>{_a(ln, q)}</li>" for ln in ctx.listing]
            + [f"{i * 3}</ol>"]
        )
    rows += [f"{i}{i}</article>"]
    if ctx.outlinks:
        rows += [f"{i}{i}<aside class={q}{p}-aside{q}>", f"{i * 3}<h2>Elsewhere</h2>", f"{i * 3}<ul>"]
        rows += [f"{i * 4}<li>{_a(ln, q)}</li>" for ln in ctx.outlinks] + [f"{i * 3}</ul>", f"{i}{i}</aside>"]
    rows += [
        ctx.extra_html,
        f"{i}</main>",
        f"{i}<footer class={q}{p}-footer{q}><small>{esc(ctx.footer)}</small></footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(r for r in rows if r.strip()) + "\n"


def bootstrap_grid(ctx: PageContext) -> str:
    """A Bootstrap-3-style grid page with jQuery boilerplate and many utility classes."""
    q, i = ctx.style.quote, ctx.style.indent
    rows = [
        "<!DOCTYPE html>",
        "<html>",
        "<head>",
        f"{i}{_meta(ctx)}",
        f"{i}<title>{esc(ctx.site_name)} &raquo; {esc(ctx.title)}</title>",
        f"{i}<link href={q}/css/site.css{q} rel={q}stylesheet{q} type={q}text/css{q}>",
        "</head>",
        "<body>",
        f"{i}<div class={q}navbar navbar-default navbar-static-top{q}><div class={q}container{q}>",
        f"{i}{i}<a class={q}navbar-brand{q} href={q}/{q}>{esc(ctx.site_name)}</a>",
        f"{i}{i}<ul class={q}nav navbar-nav{q}>",
    ]
    rows += [f"{i * 3}<li>{_a(ln, q)}</li>" for ln in ctx.nav]
    rows += [
        f"{i}{i}</ul>",
        f"{i}</div></div>",
        f"{i}<div class={q}container{q}>",
        f"{i}{i}<div class={q}row{q}>",
        f"{i * 3}<div class={q}col-md-8 col-sm-12 content{q}>",
        f"{i * 4}<h1 class={q}page-header{q}>{esc(ctx.title)}</h1>",
    ]
    rows += _paras(ctx.sections, i * 4, "h3", f" class={q}lead-text{q}")
    if ctx.listing:
        rows += (
            [f"{i * 4}<div class={q}list-group{q}>"]
            + [f"{i * 5}{_a(ln, q, 'list-group-item')}" for ln in ctx.listing]
            + [f"{i * 4}</div>"]
        )
    rows += [
        f"{i * 3}</div>",
        f"{i * 3}<div class={q}col-md-4 hidden-sm sidebar{q}>",
        f"{i * 4}<div class={q}panel panel-default{q}><div class={q}panel-heading{q}>Friends of the site</div>",
        f"{i * 4}<div class={q}panel-body{q}>",
    ]
    rows += [f"{i * 5}{_a(ln, q)}<br>" for ln in ctx.outlinks]
    rows += [
        f"{i * 4}</div></div>",
        f"{i * 3}</div>",
        f"{i}{i}</div>",
        ctx.extra_html,
        f"{i}{i}<hr><p class={q}text-muted small{q}>{esc(ctx.footer)}</p>",
        f"{i}</div>",
        f"{i}<script src={q}/js/jquery.min.js{q}></script>",
        f"{i}<script>$(function(){{ $('[data-toggle=\"tooltip\"]').tooltip(); $('.content p:first').addClass('first'); }});</script>",  # noqa: E501
        "</body>",
        "</html>",
    ]
    return "\n".join(r for r in rows if r.strip()) + "\n"


def xhtml_strict(ctx: PageContext) -> str:
    """XHTML 1.0 Strict with an XML declaration, ids with underscores and a CDATA script."""
    q, i = ctx.style.quote, ctx.style.indent
    rows = [
        f'<?xml version="1.0" encoding="{ctx.meta_charset or "utf-8"}"?>',
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">',
        '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">',
        "<head>",
        f"{i}<title>{esc(ctx.title)} :: {esc(ctx.site_name)}</title>",
        f'{i}<meta http-equiv="Content-Type" content="application/xhtml+xml; charset={ctx.meta_charset}" />'
        if ctx.meta_charset
        else "",
        f"{i}<style type={q}text/css{q}>/*<![CDATA[*/ #page_wrap {{ margin: 0 auto; width: 46em; }} #side_bar {{ float: right; }} /*]]>*/</style>",  # noqa: E501
        "</head>",
        "<body>",
        f"<div id={q}page_wrap{q}>",
        f"{i}<div id={q}top_banner{q}><h1>{esc(ctx.site_name)}</h1><p>{esc(ctx.tagline)}</p></div>",
        f"{i}<div id={q}side_bar{q}>",
        f"{i}{i}<ul>",
    ]
    rows += [f"{i * 3}<li>{_a(ln, q)}</li>" for ln in ctx.nav]
    rows += [f"{i}{i}</ul>", f"{i}</div>", f"{i}<div id={q}main_text{q}>", f"{i}{i}<h2>{esc(ctx.title)}</h2>"]
    rows += _paras(ctx.sections, i * 2, "h3")
    if ctx.listing:
        rows += [f"{i}{i}<ul>"] + [f"{i * 3}<li>{_a(ln, q)}</li>" for ln in ctx.listing] + [f"{i}{i}</ul>"]
    if ctx.outlinks:
        rows += [f"{i}{i}<p>Links: " + ", ".join(_a(ln, q) for ln in ctx.outlinks) + "<br /></p>"]
    rows += [
        f"{i}</div>",
        ctx.extra_html,
        f"{i}<div id={q}foot_note{q}><p>{esc(ctx.footer)}</p></div>",
        "</div>",
        '<script type="text/javascript">\n//<![CDATA[\nvar _page_loaded = new Date().getTime();\n//]]>\n</script>',
        "</body>",
        "</html>",
    ]
    return "\n".join(r for r in rows if r.strip()) + "\n"


def wiki_like(ctx: PageContext) -> str:
    """A wiki page: content div, [edit] links, a table of contents and inline styles."""
    q = ctx.style.quote
    rows = [
        "<!DOCTYPE html>",
        f"<html class={q}client-nojs{q} lang={q}en{q} dir={q}ltr{q}>",
        "<head>",
        _meta(ctx),
        f"<title>{esc(ctx.title)} &mdash; {esc(ctx.site_name)}</title>",
        "<script>document.documentElement.className=document.documentElement.className.replace(/(^|\\s)client-nojs(\\s|$)/,'$1client-js$2');</script>",
        "</head>",
        f"<body class={q}mediawiki ltr skin-plain{q}>",
        f"<div id={q}mw-panel{q} style={q}float:left;width:11em;font-size:90%;{q}>",
        f"<div class={q}portal{q}><h3>Navigation</h3><ul>",
    ]
    rows += [f"<li>{_a(ln, q)}</li>" for ln in ctx.nav]
    rows += [
        "</ul></div></div>",
        f"<div id={q}content{q} class={q}mw-body{q} style={q}margin-left:12em;{q}>",
        f"<h1 id={q}firstHeading{q} class={q}firstHeading{q}>{esc(ctx.title)}</h1>",
        f"<div id={q}siteSub{q}>From {esc(ctx.site_name)}</div>",
        f"<div id={q}mw-content-text{q}>",
    ]
    heads = [s.heading for s in ctx.sections if s.heading]
    if len(heads) > 1:
        rows += [f"<div id={q}toc{q} class={q}toc{q}><b>Contents</b><ul>"]
        rows += [f"<li><a href={q}#s{n}{q}>{n}. {esc(h)}</a></li>" for n, h in enumerate(heads, 1)] + ["</ul></div>"]
    n = 0
    for s in ctx.sections:
        if s.heading:
            n += 1
            rows.append(
                f"<h2><span class={q}mw-headline{q} id={q}s{n}{q}>{esc(s.heading)}</span>"
                f"<span class={q}mw-editsection{q}>[<a href={q}?action=edit&amp;section={n}{q}>edit</a>]</span></h2>"
            )
        rows += [f"<p>{esc(p)}</p>" for p in s.paragraphs]
    if ctx.listing:
        rows += ["<ul>"] + [f"<li>{_a(ln, q)}</li>" for ln in ctx.listing] + ["</ul>"]
    if ctx.outlinks:
        rows += [f"<h2><span class={q}mw-headline{q} id={q}External_links{q}>External links</span></h2>", "<ul>"]
        rows += [f"<li>{_a(ln, q, 'external text')}</li>" for ln in ctx.outlinks] + ["</ul>"]
    rows += [
        "</div>",
        ctx.extra_html,
        f"<div id={q}footer{q} style={q}clear:both;font-size:80%;{q}>{esc(ctx.footer)}</div>",
        "</div>",
        "</body>",
        "</html>",
    ]
    return "\n".join(r for r in rows if r.strip()) + "\n"


def minimal_blog(ctx: PageContext) -> str:
    """A hand-written personal blog: no indentation, few classes, an analytics snippet."""
    q = ctx.style.quote
    nav = " &middot; ".join(_a(ln, q) for ln in ctx.nav)
    rows = [
        "<html>",
        "<head>",
        _meta(ctx),
        f"<title>{esc(ctx.title)}</title>",
        "<style>body{max-width:38em;margin:2em auto;font:17px/1.5 serif}a{color:" + ctx.style.accent + "}</style>",
        "</head>",
        "<body>",
        f"<p><b>{esc(ctx.site_name)}</b> &mdash; {nav}</p>",
        f"<h1>{esc(ctx.title)}</h1>",
    ]
    rows += _paras(ctx.sections, "", "h2")
    if ctx.listing:
        rows += ["<ul>"] + [f"<li>{_a(ln, q)}</li>" for ln in ctx.listing] + ["</ul>"]
    if ctx.outlinks:
        rows += ["<p>Blogroll: " + "; ".join(_a(ln, q) for ln in ctx.outlinks) + "</p>"]
    rows += [
        ctx.extra_html,
        f"<p><small>{esc(ctx.footer)}</small></p>",
        "<script>(function(w,d){var s=d.createElement('script');s.async=1;s.src='/stats.js?'+(+new Date);"
        "d.getElementsByTagName('head')[0].appendChild(s);})(window,document);</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(r for r in rows if r.strip()) + "\n"


HONEST_TEMPLATES: dict[str, Callable[[PageContext], str]] = {
    "classic-table": classic_table,
    "semantic-html5": semantic_html5,
    "bootstrap-grid": bootstrap_grid,
    "xhtml-strict": xhtml_strict,
    "wiki-like": wiki_like,
    "minimal-blog": minimal_blog,
}


# ------------------------------------------------------------------ spam templates
def farm(ctx: PageContext) -> str:
    """THE link-farm template: every farm page on every farm host is rendered by this."""
    rows = [
        "<!DOCTYPE html>",
        "<html>",
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(ctx.title)}</title>",
        f'<meta name="keywords" content="{html.escape(ctx.tagline)}">',
        "<style>.kw{font-weight:bold}.box{border:1px solid #ccc;padding:6px}.lnk a{margin-right:8px}</style>",
        "</head>",
        "<body>",
        f'<div class="box"><h1>{esc(ctx.title)}</h1></div>',
        '<div class="txt">',
    ]
    for s in ctx.sections:
        if s.heading:
            rows.append(f'<h2 class="kw">{esc(s.heading)}</h2>')
        rows += [f"<p>{esc(p)}</p>" for p in s.paragraphs]
    rows += (
        ["</div>", '<div class="lnk">']
        + [_a(ln, '"') for ln in ctx.nav]
        + ["</div>", '<div class="lnk">']
        + [_a(ln, '"') for ln in ctx.outlinks]
        + ["</div>", ctx.extra_html, f'<div class="box">{esc(ctx.footer)}</div>', "</body>", "</html>"]
    )
    return "\n".join(r for r in rows if r) + "\n"


def quilt(ctx: PageContext) -> str:
    """Made-for-ads page that stitches copied passages together."""
    rows = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(ctx.title)} - {esc(ctx.site_name)}</title>",
        "</head>",
        "<body>",
        f'<div id="hdr"><a href="/">{esc(ctx.site_name)}</a> <span>{esc(ctx.tagline)}</span></div>',
        '<div id="ads-top">' + ctx.extra_html + "</div>",
        '<div id="post">',
        f"<h1>{esc(ctx.title)}</h1>",
    ]
    rows += _paras(ctx.sections, "")
    rows += ["</div>", '<div id="more">'] + [_a(ln, '"') + "<br>" for ln in list(ctx.nav) + list(ctx.outlinks)]
    rows += ["</div>", f'<div id="ftr">{esc(ctx.footer)}</div>', "</body>", "</html>"]
    return "\n".join(rows) + "\n"


def blog_platform(ctx: PageContext) -> str:
    """Free blog-hosting page (spin campaign copies are posted on such hosts)."""
    p, q, i = ctx.style.prefix, ctx.style.quote, ctx.style.indent
    rows = [
        "<!DOCTYPE html>",
        "<html>",
        "<head>",
        f"{i}{_meta(ctx)}",
        f"{i}<title>{esc(ctx.title)} &#8211; {esc(ctx.site_name)}</title>",
        f"{i}<link rel={q}stylesheet{q} href={q}/theme/{p}.css{q}>",
        "</head>",
        f"<body class={q}{p}-theme{q}>",
        f"{i}<div class={q}{p}-masthead{q}><a href={q}/{q}>{esc(ctx.site_name)}</a> <em>{esc(ctx.tagline)}</em></div>",
        f"{i}<div class={q}{p}-post{q}>",
        f"{i}{i}<h1>{esc(ctx.title)}</h1>",
    ]
    rows += _paras(ctx.sections, i * 2)
    rows += [f"{i}{i}{ctx.extra_html}" if ctx.extra_html else ""]
    if ctx.listing:
        rows += [f"{i}{i}<ul>"] + [f"{i * 3}<li>{_a(ln, q)}</li>" for ln in ctx.listing] + [f"{i}{i}</ul>"]
    rows += [f"{i}</div>", f"{i}<div class={q}{p}-sidebar{q}>"] + [
        f"{i}{i}{_a(ln, q)}" for ln in list(ctx.nav) + list(ctx.outlinks)
    ]
    rows += [f"{i}</div>", f"{i}<div class={q}{p}-footer{q}>{esc(ctx.footer)}</div>", "</body>", "</html>"]
    return "\n".join(r for r in rows if r.strip()) + "\n"


def shop(ctx: PageContext) -> str:
    """The promoted money site."""
    rows = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(ctx.title)} | {esc(ctx.site_name)}</title>",
        "</head>",
        "<body>",
        '<header><a href="/" class="logo">'
        + esc(ctx.site_name)
        + "</a><nav>"
        + " ".join(_a(ln, '"') for ln in ctx.nav)
        + "</nav></header>",
        f'<section class="hero"><h1>{esc(ctx.title)}</h1><p>{esc(ctx.tagline)}</p></section>',
    ]
    rows += _paras(ctx.sections, "")
    rows += [
        '<a class="cta" href="/contact.html">Apply now &rarr;</a>',
        f"<footer>{esc(ctx.footer)}</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(rows) + "\n"


def not_found(ctx: PageContext) -> str:
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n<title>404 Not Found</title>\n</head>\n<body>\n"
        f"<h1>Not Found</h1>\n<p>The requested URL {esc(ctx.title)} was not found on this server.</p>\n"
        f"<hr>\n<address>{esc(ctx.footer)}</address>\n</body>\n</html>\n"
    )
