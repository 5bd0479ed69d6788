"""EMAIL, URL and IP detection: e-mail addresses, URLs and bare domains, IPv4 and IPv6 addresses;
social-media handles.

Why this module exists: the three internet identifiers share one concern,
telling a real address from sentence punctuation and abbreviations. E-mail
addresses are found whole. URLs are found from a scheme, a "www" host or,
for bare domains, from a ".tld" backwards; a bare domain needs a plausible
top-level domain, so "5.mg", "improved.He" or "Dr.Md" never become URLs,
and trailing punctuation and unbalanced closing brackets are dropped from a
URL. IPv4 octets are checked in Python (0-255); IPv6 candidates are
validated with `ipaddress`. A social-media handle ("@migraine_mama88",
"u/accutane_throwaway22") names one account, and so one person, as an
e-mail address does; it is reported as an ID, whose surrogate keeps its
shape.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import regex as re

from deid_core.rules.patterns.common import PatternMatch, _preceded_by

# "@migraine_mama88", "@kamila.d.fit" (X, Instagram, TikTok): opening with a letter and holding a digit,
# an underscore or an inner full stop, not inside an e-mail address or a word. Notes write "@" for "at"
# before rates, times and words ("D5NS @75CC/HR", "@12pm", "@BASES", "@home"); a handle of letters only
# is left to the word rules, which mask it unless a list knows the word. "u/name" (Reddit): three
# characters at least, so "u/o" (urine output) and "u/s" (ultrasound) stay clinical.
_AT_HANDLE_RE = re.compile(
    r"(?<![\w.@/+-])@(?=[^\W\d_])(?=[\w.]*(?:\d|_|\.\w))[\w.]{2,30}(?<!\.)(?![\w@-])")
_REDDIT_HANDLE_RE = re.compile(r"(?<![\w/])u/[\w-]{3,20}(?![\w/-])")
_EMAIL_RE = re.compile(r"(?<![\w.%+'-])[\w.%+'-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])")
_URL_CHARS = r"[^\s<>\"'`]"
_URL_SCHEME_RE = re.compile(rf"(?<![\w])(?:https?|s?ftps?)://{_URL_CHARS}+", re.IGNORECASE)
_URL_WWW_RE = re.compile(rf"(?<![\w.@/-])www\d{{0,3}}\.{_URL_CHARS}+", re.IGNORECASE)
_WWW_HOST_RE = re.compile(r"www\d{0,3}\.[^.\s/]+\.[^\W\d_]{2,}", re.IGNORECASE)
# Bare domains are found from their ".tld" (cheap to scan for) backwards.
_TLD_RE = re.compile(r"\.(?P<tld>[A-Za-z]{2,24})(?![\w@-])")
_HOST_BEFORE_RE = re.compile(
    r"(?<![\w.@/:%+-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){0,8}"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$"
)
_URL_PATH_RE = re.compile(rf"[/?#]{_URL_CHARS}*")
# A bare domain needs a TLD that looks like one. Generic TLDs count in any
# case; country codes only in lower case, and those that are also words or
# clinical abbreviations (in, it, no, ca, pt, ...) only with a sub-domain or
# a path. Codes such as mg, ml, md, hr, pm are never accepted, so "5.mg",
# "improved.He" or "Dr.Md" never become URLs.
_GENERIC_TLDS = frozenset(
    "com org net edu gov mil int info biz io eu app health hospital clinic pharmacy healthcare online "
    "site website science global museum academy university asia mobi tech".split()
)
_CC_TLDS = frozenset(
    "uk de fr se au jp br ch nl dk fi es nz za ru cn kr hu ro mx sg hk tw ke pk bd lk vn rs bg uy ve".split()
)
_WEAK_CC_TLDS = frozenset("ca in it no at be us co pt ie me is ai".split())
_ANY_TLD = _GENERIC_TLDS | _CC_TLDS | _WEAK_CC_TLDS
_URL_TRAIL = ".,;:!?'\"”’»"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_IPV4_RE = re.compile(r"(?<![\w.])(?<!\d/)\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?![\w])(?!\.\d)")
_IPV6_CANDIDATE_RE = re.compile(r"(?<![\w:.])[0-9A-Fa-f:]{2,39}(?:\d{1,3}(?:\.\d{1,3}){3})?(?![\w:]|\.\d)")


def _strip_url_tail(s: str) -> str:
    """Drop trailing sentence punctuation and unbalanced closing brackets."""
    while s:
        last = s[-1]
        if last in _URL_TRAIL or (last in _CLOSERS and s.count(last) > s.count(_CLOSERS[last])):
            s = s[:-1]
        else:
            break
    return s


def find_emails(text: str) -> list[PatternMatch]:
    """E-mail addresses, whole."""
    if "@" not in text:
        return []
    return [PatternMatch(m.start(), m.end(), "EMAIL", "email") for m in _EMAIL_RE.finditer(text)]


def find_handles(text: str) -> list[PatternMatch]:
    """Social-media handles, as IDs (see above)."""
    out: list[PatternMatch] = []
    if "@" in text:
        out.extend(PatternMatch(m.start(), m.end(), "ID", "social_handle") for m in _AT_HANDLE_RE.finditer(text))
    if "u/" in text:
        out.extend(PatternMatch(m.start(), m.end(), "ID", "social_handle") for m in _REDDIT_HANDLE_RE.finditer(text))
    return out


def _tld_ok(host: str, tld: str, has_path: bool) -> bool:
    """Is this bare host a plausible domain rather than a run-on sentence or abbreviation?"""
    low = tld.lower()
    if low in _GENERIC_TLDS:
        return True
    if host[: -len(tld) - 1].replace(".", "").replace("-", "").isdigit():
        return False  # "inr=1.3.no", "wbc 12.5.no antibx": a decimal and a word run together
    if not tld.islower():
        return False
    if low in _CC_TLDS:
        return True
    return low in _WEAK_CC_TLDS and (host.count(".") >= 2 or has_path)


def _bare_domains(text: str) -> Iterator[PatternMatch]:
    """name.tld[/path] without scheme or www, grown backwards from the ".tld"."""
    for m in _TLD_RE.finditer(text):
        tld = m.group("tld")
        if tld.lower() not in _ANY_TLD:
            continue
        head = _preceded_by(text, m.start(), _HOST_BEFORE_RE, 120)
        if head is None:
            continue
        path = _URL_PATH_RE.match(text, m.end())
        if not _tld_ok(text[head.start() : m.end()], tld, path is not None):
            continue
        url = _strip_url_tail(text[head.start() : path.end() if path else m.end()])
        yield PatternMatch(head.start(), head.start() + len(url), "URL", "url_domain")


def find_urls(text: str) -> list[PatternMatch]:
    """URLs with a scheme, www-prefixed hosts and bare domains with a plausible TLD."""
    out: list[PatternMatch] = []
    if "://" in text:
        for m in _URL_SCHEME_RE.finditer(text):
            url = _strip_url_tail(m.group())
            if len(url) > url.index("://") + 3:
                out.append(PatternMatch(m.start(), m.start() + len(url), "URL", "url_scheme"))
    low = text.lower()
    if "www" in low:
        for m in _URL_WWW_RE.finditer(text):
            url = _strip_url_tail(m.group())
            if _WWW_HOST_RE.match(url):
                out.append(PatternMatch(m.start(), m.start() + len(url), "URL", "url_www"))
    out.extend(_bare_domains(text))
    return out


def find_ips(text: str) -> list[PatternMatch]:
    """IPv4 (octets 0-255, optional CIDR) and IPv6 (validated with `ipaddress`)."""
    out: list[PatternMatch] = []
    for m in _IPV4_RE.finditer(text):
        addr = m.group().split("/")[0]
        if all(int(o) <= 255 for o in addr.split(".")):
            out.append(PatternMatch(m.start(), m.end(), "IP", "ipv4"))
    if "::" in text or text.count(":") >= 7:
        for m in _IPV6_CANDIDATE_RE.finditer(text):
            cand = m.group()
            if cand.count(":") < 2 or not any(ch.isdigit() for ch in cand):
                continue
            try:
                ipaddress.IPv6Address(cand)
            except ValueError:
                continue
            out.append(PatternMatch(m.start(), m.end(), "IP", "ipv6"))
    return out
