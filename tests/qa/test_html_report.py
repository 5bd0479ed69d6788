"""The reviewer's HTML page: self-contained, escaped, grouped per report, honest about bad data."""

from __future__ import annotations

import dataclasses
import html
import re
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deid_core.lakehouse import KIND_STRUCTURED, KIND_TEXT, field_key
from deid_core.qa.html_report import (
    CATEGORY_COLOURS,
    css_class,
    field_title,
    render_sample_html,
    write_sample_html,
)
from deid_core.qa.items import MaskedSpan, ReviewItem, SampleInfo
from deid_core.runs import JobRun, summary_line

from .conftest import make_item

Sample = tuple[SampleInfo, list[ReviewItem]]
WARNING = "Data check failed"


def reports_of(page: str) -> list[str]:
    return page.split('<section class="card report"')[1:]


def test_page_is_a_self_contained_html5_document(sample: Sample) -> None:
    page = render_sample_html(*sample)
    assert page.startswith("<!DOCTYPE html>\n")
    assert '<html lang="en">' in page
    assert '<meta charset="utf-8">' in page
    assert "default-src 'none'" in page  # the browser may fetch nothing, even if something slipped in
    for external in ("<link", "<script", "<img", "<iframe", "@import", "url(", 'src="', "@font-face"):
        assert external not in page, external
    assert not re.search(r'href="(?!#)', page)  # only in-page links


def test_header_names_the_sample(sample: Sample) -> None:
    info, items = sample
    page = render_sample_html(info, items)
    for fact in (info.sample_id, info.run_id, "2026-11-26 09:30 UTC", "hybrid-1.4.0", "policy-3",
                 "3 sampled of 1250", ">3<", "review.jsonl", "missed_phi", "over_masked"):
        assert fact in page, fact


def test_no_raw_json_anywhere(sample: Sample) -> None:
    info, items = sample
    items = items + [make_item(4, 1, "narrative", 'Note: {"name": "Jane Roe"} pasted by the sender.',
                               [("Jane Roe", "NAME")])]
    page = render_sample_html(info, items)
    assert '{"' not in page
    assert "&quot;name&quot;" in page  # the text is still shown, escaped


def test_original_text_is_escaped(sample: Sample) -> None:
    info, _ = sample
    evil = 'Jane Roe <script>alert("x")</script> & <b>bold</b>'
    item = make_item(1, 1, "narrative", evil, [("Jane Roe", "NAME")])
    page = render_sample_html(info, [item])
    assert "<script" not in page and "<b>bold" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page


def test_labels_and_fields_are_escaped_in_attributes(sample: Sample) -> None:
    info, _ = sample
    label = 'X" onmouseover="alert(1)'
    item = ReviewItem(
        sample_id="s", item_id='r1"><b>', report_no=1, case_id="<i>case</i>", version="1",
        field=field_key(KIND_TEXT, '<img src=x onerror="alert(1)">'), kind=KIND_TEXT, label=None, model_version="m",
        policy_version="p", original="Roe ok", deidentified="[X] ok",
        spans=(MaskedSpan(0, 3, label, "[X]"),), strata={"sender": "<em>s</em>"},
    )
    page = render_sample_html(info, [item])
    for raw in ('onmouseover="', "<img", "<i>case", "<em>", '"><b>'):
        assert raw not in page, raw
    assert f'class="{css_class(label)}"' in page and re.fullmatch(r"cat-[A-Za-z0-9_-]+", css_class(label))


def test_masked_spans_are_highlighted_in_both_columns(sample: Sample) -> None:
    page = render_sample_html(*sample)
    assert '<mark class="cat-NAME" title="NAME">Jane Roe</mark>' in page
    assert '<mark class="cat-NAME" title="NAME">[NAME]</mark>' in page
    assert '<mark class="cat-PHONE" title="PHONE">0113 496 0000</mark>' in page
    assert "Original (masked spans highlighted)" in page and "De-identified" in page
    assert "white-space: pre-wrap" in page
    assert WARNING not in page  # the fixture is consistent


def test_legend_has_a_chip_and_count_for_every_label_used(sample: Sample) -> None:
    info, items = sample
    items = items + [make_item(4, 1, "narrative", "Logged from 192.0.2.7 by Roe.",
                               [("192.0.2.7", "IP"), ("Roe", "PHI")])]
    page = render_sample_html(info, items)
    legend = page.split('class="card legend"')[1].split("</section>")[0]
    counts = dict(re.findall(r'<span class="chip cat-[\w-]+">([\w-]+)</span><span class="n">(\d+)</span>', legend))
    used = {s.label for i in items for s in i.spans}
    assert used <= set(counts)
    assert set(CATEGORY_COLOURS) <= set(counts)  # the whole palette is explained, used or not
    assert counts["NAME"] == "5" and counts["DATE"] == "7" and counts["IP"] == "1" and counts["OTHER"] == "0"
    # known categories have their own colour; an unknown one falls back to the default style
    for label, colour in CATEGORY_COLOURS.items():
        assert f".{css_class(label)} {{ background: {colour}; }}" in page
    assert ".cat-IP {" not in page
    assert len(set(CATEGORY_COLOURS.values())) == len(CATEGORY_COLOURS)


def test_items_are_grouped_per_report_in_order(sample: Sample) -> None:
    info, items = sample
    shuffled = list(reversed(items))
    page = render_sample_html(info, shuffled)
    reports = reports_of(page)
    assert [re.search(r"Report (\d+) of (\d+)", r).groups() for r in reports] == [  # type: ignore[union-attr]
        ("1", "3"), ("2", "3"), ("3", "3"),
    ]
    for no, section in enumerate(reports, 1):
        ids = re.findall(r'id="item-(r\d{3}-f\d{2})"', section)
        assert ids and all(i.startswith(f"r{no:03d}-") for i in ids)
        assert f'case <span class="mono">GB-ACME-2026-{1000 + no}</span>' in section
    assert "Sender: <b>Consumer portal</b>" in reports[1]
    assert "Narrative length: <b>&lt;300 characters</b>" in reports[1]
    assert "Model: <b>hybrid-1.4.0</b>" in reports[0]


def test_structured_fields_are_a_table_with_readable_names(sample: Sample) -> None:
    page = render_sample_html(*sample)
    first = reports_of(page)[0]
    table = first.split('<table class="structured">')[1].split("</table>")[0]
    assert "Patient initials" in table and "Patient birth date" in table
    assert '<mark class="cat-DATE" title="DATE">1978-05-02</mark>' in table
    assert "Narrative" not in table
    assert "item r001-f02" in table  # item ids visible so reviewers can find the line


@pytest.mark.parametrize(
    ("field", "title"),
    [(field_key(KIND_TEXT, "narrative"), "Narrative"),
     (field_key(KIND_STRUCTURED, "patient.birth_date"), "Patient birth date"),
     (field_key(KIND_TEXT, "reporter.comment_text"), "Reporter comment text"),
     (field_key(KIND_TEXT, "drug[0]:dose_text"), "Drug[0]:dose text"),  # a colon in the path is the path's
     ("narrative", "Narrative"),  # not a field key: titled as it is
     (field_key(KIND_TEXT, ""), "text:")],
)
def test_field_title(field: str, title: str) -> None:
    assert field_title(field) == title


def test_splice_mismatch_shows_stored_text_with_a_warning(sample: Sample) -> None:
    info, items = sample
    bad = dataclasses.replace(items[0], deidentified=items[0].deidentified.replace("[NAME]", "Jane Roe", 1))
    page = render_sample_html(info, [bad])
    assert page.count(WARNING) == 1
    assert '<mark class="cat-NAME" title="NAME">Jane Roe</mark>' in page  # the original is still highlighted
    assert "[NAME]</mark>" not in page  # the misleading rebuilt column is not shown
    assert "Jane Roe, a [AGE] year old" in page  # the stored text is, as stored


def test_overlapping_or_out_of_range_spans_are_not_highlighted(sample: Sample) -> None:
    info, items = sample
    item = items[0]
    overlapping = dataclasses.replace(item, spans=item.spans + (MaskedSpan(2, 6, "NAME", "[NAME]"),))
    outside = dataclasses.replace(item, spans=(MaskedSpan(0, len(item.original) + 5, "NAME", "[NAME]"),))
    for bad in (overlapping, outside):
        page = render_sample_html(info, [bad])
        assert page.count(WARNING) == 1
        assert "<mark" not in reports_of(page)[0]


def test_unmasked_field_says_so(sample: Sample) -> None:
    info, _ = sample
    page = render_sample_html(info, [make_item(1, 1, "narrative", "Rash after aspirin.", [])])
    assert "Nothing was masked in this field" in page


def test_empty_sample_renders(sample: Sample) -> None:
    page = render_sample_html(sample[0], [])
    assert "This sample has no items." in page and "</html>" in page


def test_write_is_private_and_atomic(tmp_path: Path, sample: Sample) -> None:
    path = tmp_path / "s1" / "report.html"
    write_sample_html(*sample, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="utf-8") == render_sample_html(*sample)
    assert list(path.parent.iterdir()) == [path]


def _job_run(job: str, minutes: int, **kw: object) -> JobRun:
    start = datetime(2026, 11, 26, 2, 0, tzinfo=timezone.utc) + timedelta(minutes=minutes)
    values: dict[str, object] = {
        "run_id": "scheduled__2026-11-26T02:00:00+00:00", "job": job, "invocation_id": f"i{minutes}",
        "mode": "stream", "status": "ok", "started_at": start, "finished_at": start + timedelta(seconds=30),
        "seconds": 30.0, "versions": {"code": "0.1.0"},
    }
    values.update(kw)
    return JobRun(**values)  # type: ignore[arg-type]


def test_run_log_card_shows_the_batchs_runs(sample: Sample) -> None:
    runs = [
        _job_run("ingest_e2b", 0, mode="batch", input_count=6, output_count=120,
                 quarantined_by_code={"E_PARSE": 2}),
        _job_run("deidentify", 5, status="failed", attempt=1, detail={"error": "Py4JJavaError"}),
        _job_run("deidentify", 20, attempt=2, input_count=1200, output_count=1190, failed_count=10,
                 versions={"model": "model-7", "policy": "hipaa_safe_harbor-2"}),
    ]
    page = render_sample_html(*sample, runs=runs)
    card = page.split('<section class="card runlog">')[1].split("</section>")[0]
    rows = re.findall(r"<tr title=\"([^\"]*)\">(.*?)</tr>", card)
    assert len(rows) == 3
    assert "scheduled__2026-11-26T02:00:00+00:00" in card
    assert rows[0][0] == html.escape(summary_line(runs[0]), quote=True)  # the whole line on hover
    assert '<td class="num">1,200</td>' in rows[2][1] and '<td class="num">10</td>' in rows[2][1]
    assert "E_PARSE 2" in rows[0][1] and "model model-7" in rows[2][1]
    assert '<td class="failed">failed (Py4JJavaError)</td>' in rows[1][1] and "deidentify (try 2)" in rows[2][1]
    assert "2026-11-26 02:20 UTC" in rows[2][1]
    assert "<td class=\"num\">–</td>" in rows[1][1]  # a count the run did not record


def test_run_log_card_says_when_it_falls_back_or_is_empty(sample: Sample) -> None:
    info, items = sample
    page = render_sample_html(info, items, runs=[_job_run("ingest_e2b", 0)], runs_of_this_run=False)
    assert f"No job recorded run <span class=\"mono\">{info.run_id}</span>" in page
    assert "has no rows yet" in render_sample_html(info, items, runs=[])
    assert "runlog" not in render_sample_html(info, items)  # no run log given: no card


def test_run_log_values_are_escaped(sample: Sample) -> None:
    run = _job_run("ingest_e2b", 0, versions={"model": '<script>"x"'}, detail={"note": "<b>"})
    card = render_sample_html(*sample, runs=[run]).split('class="card runlog"')[1].split("</section>")[0]
    assert "<script" not in card and "<b>" not in card
    assert "model &lt;script&gt;&quot;x&quot;" in card and "note &lt;b&gt;" in card
