"""The synthetic E2B generators: exact round trip, identities, versions, determinism.

The sample files are what the ingest job and the structured-field
de-identification are developed against, so the reader must give back
exactly what the generator put in -- every text field byte for byte -- and
follow-up versions must look like follow-ups (same case, new version).
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from lxml import etree

from deid_core.e2b import Report, parse_reports
from deid_core.e2b.synthetic import (
    SyntheticReport,
    case_of,
    synthetic_r2_batch,
    synthetic_r3_batch,
    synthetic_reports,
    ts,
)
from deid_core.synthetic import generate_one

N, SEED = 12, 2024


@pytest.fixture(scope="module")
def plans() -> list[SyntheticReport]:
    return synthetic_reports(N, SEED)


@pytest.fixture(scope="module")
def r3_reports() -> list[Report]:
    return parse_reports(synthetic_r3_batch(N, SEED))


@pytest.fixture(scope="module")
def r2_reports() -> list[Report]:
    return parse_reports(synthetic_r2_batch(N, SEED))


def _common_checks(report: Report, plan: SyntheticReport) -> None:
    case = plan.case
    assert report.case_id == case.case_id
    assert report.report_id == case.report_id
    assert report.received_date == ts(plan.most_recent_info)
    assert report.sender == case.sender.organisation
    assert {f.path: f.text for f in report.text_fields} == plan.text_fields
    assert report.text("narrative") == plan.narrative.text
    assert report.value("patient.initials") == case.initials
    assert report.value("patient.birth_date") == ts(case.birth_date)
    assert report.value("patient.age") == str(case.age_years)
    assert report.value("patient.hospital_record_number") == case.record_number
    assert report.value("reaction[0].start_date") == ts(case.onset)
    assert report.value("reporter[0].given_name") == case.reporter.given
    assert report.value("reporter[0].family_name") == case.reporter.family
    assert report.value("reporter[0].city") == case.reporter.city
    assert report.value("reporter[0].organization") == case.reporter.organisation
    assert report.value("sender.telephone") == case.sender.phone
    assert report.value("sender.email") == case.sender.email
    paths = [f.path for f in report.text_fields] + [f.path for f in report.structured_fields]
    assert len(paths) == len(set(paths))
    # the QA sample is stratified by country (R2 occurcountry, R3 the first ISO 3166 code)
    assert report.country == case.country


def test_r3_round_trip(plans: list[SyntheticReport], r3_reports: list[Report]) -> None:
    assert len(r3_reports) == N
    for report, plan in zip(r3_reports, plans):
        _common_checks(report, plan)
        assert report.format == "R3"
        assert report.version == plan.created_ts
        assert report.value("report.creation_date") == plan.created_ts
        assert report.value("drug[0].dosage[0].start_date") == ts(plan.case.drug_start)
        assert report.value("reporter[0].telephone") == plan.case.reporter.phone
        assert report.value("reporter[0].email") == plan.case.reporter.email


def test_r2_round_trip(plans: list[SyntheticReport], r2_reports: list[Report]) -> None:
    assert len(r2_reports) == N
    for report, plan in zip(r2_reports, plans):
        _common_checks(report, plan)
        assert report.format == "R2"
        assert report.version == str(plan.version)
        assert report.value("drug[0].start_date") == ts(plan.case.drug_start)
        assert report.value("report.first_received_date") == ts(plan.case.first_received)


def test_narratives_are_the_projects_generator(plans: list[SyntheticReport]) -> None:
    for index, plan in enumerate(plans):
        assert plan.narrative.text == generate_one(SEED, index).text


def test_comments_carry_phi(plans: list[SyntheticReport]) -> None:
    for plan in plans:
        reporter = plan.case.reporter
        assert reporter.family in plan.reporter_comment and reporter.phone in plan.reporter_comment
        assert plan.case.initials in plan.reporter_comment
        assert reporter.email in plan.sender_comment and plan.case.record_number in plan.sender_comment


def test_identities_are_consistent(plans: list[SyntheticReport]) -> None:
    for plan in plans:
        case = plan.case
        assert case.birth_date < case.drug_start <= case.onset < case.first_received <= plan.most_recent_info
        years = (case.onset - case.birth_date).days / 365.25
        assert abs(years - case.age_years) < 1
        assert case.onset <= case.reaction_end
        assert case.country == case.case_id[:2]


def test_case_of_blocks() -> None:
    assert [case_of(i) for i in range(8)] == [
        (0, 1), (0, 2), (1, 1), (2, 1), (3, 1), (3, 2), (4, 1), (5, 1)]


@pytest.mark.parametrize("which", ["r3", "r2"])
def test_versioned_cases(which: str, plans: list[SyntheticReport], r3_reports: list[Report],
                         r2_reports: list[Report]) -> None:
    reports = r3_reports if which == "r3" else r2_reports
    by_case: dict[str, list[Report]] = defaultdict(list)
    for report in reports:
        by_case[report.case_id].append(report)
    versioned = {case: rs for case, rs in by_case.items() if len(rs) > 1}
    assert len(versioned) == N // 4 and len(by_case) == N - N // 4
    for first, second in versioned.values():
        assert first.version != second.version
        if which == "r2":
            assert (first.version, second.version) == ("1", "2")
        else:
            assert second.version[:14] > first.version[:14]
        assert second.received_date > first.received_date  # type: ignore[operator]
        assert first.report_id == second.report_id
        assert first.value("patient.birth_date") == second.value("patient.birth_date")
        assert first.text("narrative") != second.text("narrative")
    assert len({(r.case_id, r.version) for r in reports}) == N


def test_deterministic_and_seed_dependent() -> None:
    assert synthetic_r3_batch(3, 5) == synthetic_r3_batch(3, 5)
    assert synthetic_r2_batch(3, 5) == synthetic_r2_batch(3, 5)
    assert synthetic_r3_batch(3, 5) != synthetic_r3_batch(3, 6)


def test_start_continues_the_same_stream(r3_reports: list[Report]) -> None:
    tail = parse_reports(synthetic_r3_batch(4, SEED, start=5))
    assert tail == r3_reports[5:9]  # report 5 is a follow-up of report 4, planned elsewhere


def test_well_formed_and_namespaced() -> None:
    root = etree.fromstring(synthetic_r3_batch(2, 1))
    assert root.tag == "{urn:hl7-org:v3}MCCI_IN200100UV01"
    assert len(root.findall("{urn:hl7-org:v3}PORR_IN049016UV")) == 2
    r2 = etree.fromstring(synthetic_r2_batch(2, 1))
    assert r2.tag == "ichicsr" and len(r2.findall("safetyreport")) == 2


def test_empty_batches_and_bad_arguments() -> None:
    assert parse_reports(synthetic_r3_batch(0, 1)) == []
    assert parse_reports(synthetic_r2_batch(0, 1)) == []
    with pytest.raises(ValueError):
        synthetic_reports(-1, 1)
    with pytest.raises(ValueError):
        synthetic_reports(1, 1, start=-2)


def test_lazy_package_exports() -> None:
    import deid_core.e2b as e2b

    assert e2b.synthetic_r3_batch is synthetic_r3_batch
    with pytest.raises(AttributeError):
        e2b.no_such_name  # noqa: B018
