"""The page a pharmacist reads to review a QA sample.

One self-contained HTML file per sample: it is opened from the restricted
QA folder, often on a locked-down workstation, so nothing may be fetched
from elsewhere (no external CSS, scripts or fonts; a Content-Security-Policy
forbids it outright). Each field is shown twice, the original with what was
masked highlighted and the de-identified text with what replaced it, in the
same category colour, so that a missed name or a masked dose stands out.

The right-hand column is rebuilt from the original and the recorded spans
rather than taken on trust: if that does not reproduce the stored
de-identified text, the page says so instead of showing highlights that
would mislead the reviewer.

A small table shows the run log of the batch (`deid_core.runs`: the jobs
that ingested and de-identified it, their counts, failures, quarantine
codes and versions), so a reviewer who finds a fully masked field can see
whether the night had failures, without asking operations.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from itertools import groupby
from pathlib import Path

from deid_core.lakehouse import KIND_STRUCTURED, split_field_key
from deid_core.qa.items import MaskedSpan, ReviewItem, SampleInfo
from deid_core.qa.review import REVIEW_STEPS, private_text_writer
from deid_core.runs import JobRun, summary_line

#: Category colours: Paul Tol's "light" scheme, made for areas behind black
#: text and distinguishable with the common colour-vision deficiencies.
#: Colour is not the only cue: legend chips carry the category name, and each
#: highlight names its category on hover and in its replacement tag.
#: Keys are categories of `deid_core.categories` (tests/test_categories.py
#: checks it); the scheme has nine colours, so IP, rare, has none.
CATEGORY_COLOURS: dict[str, str] = {
    "NAME": "#77AADD",
    "DATE": "#EE8866",
    "AGE": "#EEDD88",
    "LOCATION": "#44BB99",
    "PHONE": "#FFAABB",
    "EMAIL": "#99DDFF",
    "URL": "#BBCC33",
    "ID": "#AAAA00",
    "OTHER": "#DDDDDD",
    "PHI": "#BBBBBB",
}
#: Any other label: white with a dashed outline, unlike every colour above.
DEFAULT_COLOUR = "#FFFFFF"

#: Strata shown in a report's heading, in this order, with readable names.
_STRATA_NAMES = {
    "sender": "Sender",
    "country": "Country",
    "length_bucket": "Narrative length",
    "model_version": "Model",
}

_CSS_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def css_class(label: str) -> str:
    """`cat-<label>`, reduced to characters a class name may hold."""
    return "cat-" + (_CSS_UNSAFE.sub("_", label) or "_")


def _anchor(prefix: str, value: str) -> str:
    return f"{prefix}-{_CSS_UNSAFE.sub('_', value)}"


def field_title(field: str) -> str:
    """"text:narrative" -> "Narrative", "structured:patient.birth_date" -> "Patient birth date".

    `field` is a field key (`deid_core.lakehouse`); anything else is titled as it is.
    """
    try:
        path = split_field_key(field)[1]
    except ValueError:
        path = field
    words = " ".join(re.sub(r"[._]+", " ", path).split())
    return (words[:1].upper() + words[1:]) if words else field


def _style() -> str:
    coloured = ", ".join(f"mark.{css_class(label)}, .chip.{css_class(label)}" for label in CATEGORY_COLOURS)
    chips = "\n".join(
        f"  .{css_class(label)} {{ background: {colour}; }}" for label, colour in CATEGORY_COLOURS.items()
    )
    return f"""
  :root {{ --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --paper: #ffffff; --page: #f3f4f6; }}
  * {{ box-sizing: border-box; }}
  body {{ margin: 0; background: var(--page); color: var(--ink);
    font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }}
  main {{ max-width: 1360px; margin: 0 auto; padding: 16px 24px 48px; }}
  h1 {{ font-size: 24px; margin: 4px 0 12px; }}
  h2 {{ font-size: 19px; margin: 0 0 6px; }}
  h3 {{ font-size: 16px; margin: 0 0 8px; }}
  h4 {{ font-size: 12px; margin: 0 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }}
  .confidential {{ background: #5a1e1e; color: #fff; padding: 6px 24px; font-size: 13px; }}
  .card {{ background: var(--paper); border: 1px solid var(--line); border-radius: 8px;
    padding: 14px 18px; margin: 0 0 16px; }}
  .facts {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr));
    gap: 10px 24px; margin: 0; }}
  .facts dt {{ color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }}
  .facts dd {{ margin: 0; font-weight: 600; overflow-wrap: anywhere; }}
  .top {{ display: grid; grid-template-columns: 3fr 2fr; gap: 16px; }}
  .top > .card {{ margin: 0 0 16px; }}
  .howto ol {{ margin: 6px 0; padding-left: 22px; }}
  .howto li {{ margin: 2px 0; }}
  .howto p {{ margin: 6px 0 0; }}
  code, .mono {{ font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .92em; }}
  .chips {{ list-style: none; margin: 6px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; }}
  .chips li {{ display: flex; align-items: center; gap: 6px; border: 1px solid var(--line);
    border-radius: 6px; padding: 3px 8px 3px 3px; background: #fafbfc; }}
  .chips .n {{ font-weight: 700; min-width: 1.5em; text-align: right; }}
  .chips li.zero {{ color: var(--muted); }}
  .chips li.zero .n {{ font-weight: 400; }}
  .total {{ margin: 10px 0 0; color: var(--muted); }}
  mark, .chip {{ background: {DEFAULT_COLOUR}; color: #000; outline: 1px dashed #555; outline-offset: -1px; }}
  mark {{ padding: 0 2px; border-radius: 3px; -webkit-box-decoration-break: clone; box-decoration-break: clone; }}
  .chip {{ display: inline-block; padding: 1px 8px; border-radius: 4px; font-size: 12px; font-weight: 700;
    letter-spacing: .03em; }}
{chips}
  {coloured} {{ outline: none; }}
  nav.toc {{ margin: 0 0 16px; color: var(--muted); }}
  nav.toc a {{ display: inline-block; min-width: 2.2em; text-align: center; margin: 2px; padding: 1px 6px;
    border: 1px solid var(--line); border-radius: 4px; background: var(--paper); color: var(--ink);
    text-decoration: none; }}
  .report > h2 {{ display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap; }}
  .report > h2 .case {{ font-size: 15px; font-weight: 400; color: var(--muted); }}
  .meta {{ margin: 0 0 12px; display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 14px; }}
  .meta span b {{ font-weight: 600; }}
  .meta span {{ color: var(--muted); }}
  .meta span b {{ color: var(--ink); }}
  .item {{ border-top: 1px solid var(--line); padding: 12px 0 4px; }}
  .item-id {{ color: #8b949e; font-size: 12px; font-weight: 400; margin-left: 8px; }}
  td .item-id {{ margin-left: 0; }}
  .pair {{ display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }}
  .text {{ white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.65; background: #fcfcfd;
    border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin: 0; }}
  .empty {{ color: var(--muted); font-style: italic; }}
  .note {{ color: var(--muted); font-size: 13px; margin: 6px 0 0; }}
  .warning {{ background: #fff4e5; border: 1px solid #d97706; border-left-width: 5px; color: #5c3300;
    border-radius: 6px; padding: 6px 10px; margin: 0 0 8px; font-size: 14px; }}
  table.structured {{ width: 100%; border-collapse: collapse; margin: 8px 0 4px; font-size: 14px; }}
  table.structured caption {{ text-align: left; font-weight: 700; padding: 4px 0 6px; }}
  table.structured th, table.structured td {{ border-top: 1px solid var(--line); padding: 6px 8px;
    text-align: left; vertical-align: top; }}
  table.structured th {{ color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em;
    background: #f6f8fa; }}
  table.structured td.val {{ white-space: pre-wrap; overflow-wrap: anywhere; width: 30%; }}
  table.runs td.num, table.runs th.num {{ text-align: right; font-variant-numeric: tabular-nums;
    white-space: nowrap; }}
  table.runs td.failed {{ color: #8a1c1c; font-weight: 700; }}
  footer {{ color: var(--muted); font-size: 12px; margin-top: 24px; }}
  @media (max-width: 900px) {{
    .pair, .top {{ grid-template-columns: 1fr; }}
    main {{ padding: 12px; }}
  }}
  @media print {{
    * {{ -webkit-print-color-adjust: exact; print-color-adjust: exact; }}
    body {{ background: #fff; font-size: 10pt; }}
    main {{ max-width: none; padding: 0; }}
    nav.toc {{ display: none; }}
    .card {{ border: none; padding: 0; margin-bottom: 12pt; }}
    .report {{ break-before: page; }}
    .item, table.structured tr {{ break-inside: avoid; }}
    .pair {{ grid-template-columns: 1fr 1fr; }}
    .text {{ background: #fff; }}
  }}
"""


def _ordered_spans(text: str, spans: Iterable[MaskedSpan]) -> list[MaskedSpan] | None:
    """Spans by position, or None when they overlap or leave the text (then nothing can be highlighted)."""
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    pos = 0
    for span in ordered:
        if span.start < pos or span.start >= span.end or span.end > len(text):
            return None
        pos = span.end
    return ordered


def _chip(label: str) -> str:
    return f'<span class="chip {_esc(css_class(label))}">{_esc(label)}</span>'


def _mark(label: str, inner_html: str) -> str:
    return f'<mark class="{_esc(css_class(label))}" title="{_esc(label)}">{inner_html}</mark>'


def _highlight(text: str, spans: Sequence[MaskedSpan], replaced: bool) -> tuple[str, str]:
    """(plain text, HTML) of the original with each span marked, or with each span replaced and marked."""
    plain: list[str] = []
    out: list[str] = []
    pos = 0
    for span in spans:
        plain.append(text[pos:span.start])
        out.append(_esc(text[pos:span.start]))
        shown = span.replacement if replaced else text[span.start:span.end]
        plain.append(shown)
        out.append(_mark(span.label, _esc(shown)))
        pos = span.end
    plain.append(text[pos:])
    out.append(_esc(text[pos:]))
    return "".join(plain), "".join(out)


_MISMATCH = (
    '<p class="warning" role="alert"><b>Data check failed:</b> the engine\'s recorded replacements do not '
    "reproduce the stored de-identified text of this field. It is shown as stored, without highlighting. "
    "Review it as shown and mention the item id to the QA lead.</p>"
)
_BAD_SPANS = (
    '<p class="warning" role="alert"><b>Data check failed:</b> the recorded masked spans of this field '
    "overlap or fall outside the original, so they cannot be highlighted. Both texts are shown as stored. "
    "Review them as shown and mention the item id to the QA lead.</p>"
)


def _text_or_empty(inner_html: str) -> str:
    return inner_html if inner_html else '<span class="empty">(empty)</span>'


def _render_pair(item: ReviewItem) -> tuple[str, str, str]:
    """(warning HTML, original HTML, de-identified HTML) of one item."""
    spans = _ordered_spans(item.original, item.spans)
    if spans is None:
        return _BAD_SPANS, _esc(item.original), _esc(item.deidentified)
    _, left = _highlight(item.original, spans, replaced=False)
    spliced, right = _highlight(item.original, spans, replaced=True)
    if spliced != item.deidentified:
        return _MISMATCH, left, _esc(item.deidentified)
    return "", left, right


def _item_id_html(item: ReviewItem) -> str:
    field = _esc(item.field)
    return f'<span class="item-id" title="{field}">item {_esc(item.item_id)} · {field}</span>'


def _render_text_item(item: ReviewItem) -> str:
    warning, left, right = _render_pair(item)
    note = "" if item.spans else '<p class="note">Nothing was masked in this field: read it for missed PHI.</p>'
    return (
        f'<article class="item" id="{_esc(_anchor("item", item.item_id))}">\n'
        f"<h3>{_esc(field_title(item.field))}{_item_id_html(item)}</h3>\n{warning}"
        '<div class="pair">\n'
        f'<div><h4>Original (masked spans highlighted)</h4><div class="text">{_text_or_empty(left)}</div></div>\n'
        f'<div><h4>De-identified</h4><div class="text">{_text_or_empty(right)}</div></div>\n'
        f"</div>{note}\n</article>\n"
    )


def _render_structured(items: Sequence[ReviewItem]) -> str:
    rows: list[str] = []
    for item in items:
        warning, left, right = _render_pair(item)
        category = _chip(item.label) if item.label else "–"
        rows.append(
            f'<tr id="{_esc(_anchor("item", item.item_id))}">'
            f"<td>{_esc(field_title(item.field))}<br>{_item_id_html(item)}</td>"
            f"<td>{category}</td>"
            f'<td class="val">{_text_or_empty(left)}</td>'
            f'<td class="val">{warning}{_text_or_empty(right)}</td></tr>'
        )
    return (
        '<table class="structured">\n<caption>Structured fields</caption>\n'
        "<thead><tr><th>Field</th><th>Category</th><th>Original (masked highlighted)</th>"
        "<th>De-identified</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n"
    )


def _strata_html(strata: dict[str, str]) -> str:
    keys = [k for k in _STRATA_NAMES if k in strata] + sorted(k for k in strata if k not in _STRATA_NAMES)
    parts = []
    for key in keys:
        name = _STRATA_NAMES.get(key) or field_title(key)
        value = strata[key] + (" characters" if key == "length_bucket" else "")
        parts.append(f"<span>{_esc(name)}: <b>{_esc(value)}</b></span>")
    return "".join(parts)


def _render_report(report_no: int, of: int, items: Sequence[ReviewItem]) -> str:
    first = items[0]
    text_items = [i for i in items if i.kind != KIND_STRUCTURED]
    structured = [i for i in items if i.kind == KIND_STRUCTURED]
    body = "".join(_render_text_item(i) for i in text_items)
    if structured:
        body += _render_structured(structured)
    return (
        f'<section class="card report" id="report-{report_no}">\n'
        f'<h2>Report {report_no} of {of}<span class="case">case <span class="mono">{_esc(first.case_id)}</span>'
        f" · version {_esc(first.version)}</span></h2>\n"
        f'<p class="meta">{_strata_html(first.strata)}</p>\n{body}</section>\n'
    )


def _legend(items: Sequence[ReviewItem]) -> str:
    counts = Counter(span.label for item in items for span in item.spans)
    labels = list(CATEGORY_COLOURS) + sorted(label for label in counts if label not in CATEGORY_COLOURS)
    chips = "".join(
        ("<li>" if counts[label] else '<li class="zero">')
        + f'{_chip(label)}<span class="n">{counts[label]}</span></li>'
        for label in labels
    )
    total = sum(counts.values())
    return (
        '<section class="card legend"><h2>Categories and masked spans</h2>\n'
        '<p class="note">Colour of each category in both texts, and how many spans of it this sample masked.</p>\n'
        f'<ul class="chips">{chips}</ul>\n<p class="total">{total} masked spans in all.</p></section>\n'
    )


def _howto() -> str:
    steps = "".join(f"<li>{_esc(step)}</li>" for step in REVIEW_STEPS)
    return (
        '<section class="card howto"><h2>How to review</h2>\n'
        f"<ol>{steps}</ol>\n"
        "<p>Your marks go in <code>review.jsonl</code>, next to this page: one line per item, "
        "in the lists <code>missed_phi</code> and <code>over_masked</code>. Save it as UTF-8 and keep "
        "one line per item.</p></section>\n"
    )


def _when(iso: str) -> str:
    """"2026-11-26T09:30:00+00:00" -> "2026-11-26 09:30 UTC"; anything else as given."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.utcoffset() == timedelta(0):
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return moment.isoformat(sep=" ", timespec="minutes")


def _plural(values: Sequence[str]) -> str:
    return "s" if len(values) > 1 else ""


def _facts(info: SampleInfo, items: Sequence[ReviewItem], reports: int) -> str:
    n_struct = sum(1 for i in items if i.kind == KIND_STRUCTURED)
    facts = [
        ("Run", info.run_id),
        ("Created", _when(info.created_at)),
        ("Model version" + _plural(info.model_versions), ", ".join(info.model_versions) or "–"),
        ("Policy version" + _plural(info.policy_versions), ", ".join(info.policy_versions) or "–"),
        ("Reports", f"{info.sampled_reports} sampled of {info.population_reports}"),
        ("Strata", str(info.strata)),
        ("Fields", f"{len(items)} in {reports} reports ({len(items) - n_struct} text, {n_struct} structured)"),
        ("Seed", info.seed),
    ]
    rows = "".join(f"<div><dt>{_esc(k)}</dt><dd>{_esc(v)}</dd></div>" for k, v in facts)
    return f'<dl class="facts">{rows}</dl>'


def _took(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 600 else f"{seconds / 60:.1f} min"


def _count(n: int | None) -> str:
    return "–" if n is None else f"{n:,}"


def _run_status(run: JobRun) -> str:
    if run.ok:
        return run.status
    how = f"exit {run.detail['exit_code']}" if "exit_code" in run.detail else run.detail.get("error", "")
    return f"{run.status} ({how})" if how else run.status


def _run_row(run: JobRun) -> str:
    quarantined = ", ".join(f"{code} {n:,}" for code, n in run.quarantined_by_code.items()) or "–"
    versions = ", ".join(f"{k} {v}" for k, v in run.versions.items()) or "–"
    attempt = f" (try {run.attempt})" if run.attempt and run.attempt > 1 else ""
    status_class = "" if run.ok else ' class="failed"'
    cells = [
        f'<td class="mono">{_esc(run.job + attempt)}</td>',
        f"<td>{_esc(run.mode)}</td>",
        f"<td{status_class}>{_esc(_run_status(run))}</td>",
        f"<td>{_esc(_when(run.started_at.isoformat()))}</td>",
        f'<td class="num">{_esc(_took(run.seconds))}</td>',
        *(f'<td class="num">{_count(n)}</td>' for n in (run.input_count, run.output_count, run.failed_count)),
        f"<td>{_esc(quarantined)}</td>",
        f'<td class="mono">{_esc(versions)}</td>',
    ]
    return f'<tr title="{_esc(summary_line(run))}">' + "".join(cells) + "</tr>"


def _run_log(runs: Sequence[JobRun], of_this_run: bool, run_id: str) -> str:
    """The run log card: one row per job run, its whole one-line summary on hover."""
    if not runs:
        note = "The run log (<code>job_runs</code>) has no rows yet."
        return f'<section class="card runlog"><h2>Run log</h2>\n<p class="note">{note}</p></section>\n'
    if of_this_run:
        note = f'The jobs of run <span class="mono">{_esc(runs[0].run_id)}</span> that made this batch.'
    else:
        note = f'No job recorded run <span class="mono">{_esc(run_id)}</span>: the latest run of each job is shown.'
    head = "".join(
        f'<th class="num">{name}</th>' if name in ("Took", "In", "Out", "Failed") else f"<th>{name}</th>"
        for name in ("Job", "Mode", "Status", "Started", "Took", "In", "Out", "Failed", "Quarantined", "Versions")
    )
    body = "\n".join(_run_row(r) for r in runs)
    return (
        '<section class="card runlog"><h2>Run log</h2>\n'
        f'<p class="note">{note} Counts and versions only; hover over a row for its whole line.</p>\n'
        f'<table class="structured runs">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n'
        "</table></section>\n"
    )


def render_sample_html(info: SampleInfo, items: Sequence[ReviewItem], runs: Sequence[JobRun] | None = None,
                       runs_of_this_run: bool = True) -> str:
    """The whole page; every value from the data is HTML-escaped.

    `runs`, when given, are the run log rows shown in the "Run log" card:
    those of the batch's run (`runs_of_this_run`), or the latest run of
    each job when that run recorded none. None leaves the card out.
    """
    ordered = sorted(items, key=lambda i: i.report_no)  # stable: fields keep the job's order within a report
    by_report = [(no, list(group)) for no, group in groupby(ordered, key=lambda i: i.report_no)]
    of = max([info.sampled_reports] + [no for no, _ in by_report])
    toc = "".join(f'<a href="#report-{no}">{no}</a>' for no, _ in by_report)
    reports = "".join(_render_report(no, of, group) for no, group in by_report)
    sid = _esc(info.sample_id)
    if not by_report:
        reports = '<section class="card"><p class="empty">This sample has no items.</p></section>\n'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="robots" content="noindex, nofollow">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        f"<title>QA sample {sid}: de-identification review</title>\n"
        f"<style>{_style()}</style>\n</head>\n<body>\n"
        '<div class="confidential">Confidential: this page shows original, identifiable report text. '
        "Keep it in the QA folder; do not copy, forward or print it elsewhere.</div>\n"
        "<main>\n"
        f'<header class="card"><h1>De-identification QA sample <span class="mono">{sid}</span></h1>\n'
        f"{_facts(info, items, len(by_report))}</header>\n"
        f'<div class="top">{_howto()}{_legend(items)}</div>\n'
        f"{_run_log(runs, runs_of_this_run, info.run_id) if runs is not None else ''}"
        f'<nav class="toc">Reports: {toc}</nav>\n'
        f"{reports}"
        f"<footer>Sample {sid} · run {_esc(info.run_id)} · {_esc(_when(info.created_at))}</footer>\n"
        "</main>\n</body>\n</html>\n"
    )


def write_sample_html(info: SampleInfo, items: Sequence[ReviewItem], path: Path,
                      runs: Sequence[JobRun] | None = None, runs_of_this_run: bool = True) -> None:
    """All-or-nothing and owner-only: the page holds original text."""
    page = render_sample_html(info, items, runs, runs_of_this_run)
    with private_text_writer(path) as fh:
        fh.write(page)
