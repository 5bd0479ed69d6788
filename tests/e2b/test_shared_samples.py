"""The E2B reader on the public example files in ../shared/data/e2b.

The FDA FAERS and ICH R3 examples and the caAERS R2 samples are the closest
thing to real input the project may use. Every file must parse; a few facts
read off specific files by eye pin the element locations (short values and
prefixes only, never whole texts); and generic checks hold for every report:
unique paths, known labels, E2B-shaped dates, no time stamp left behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from deid_core.e2b import LABELS, Report, iter_reports

pytestmark = pytest.mark.shared_data

_E2B_DATE = re.compile(r"\d{4}(\d{2}){0,5}(\.\d+)?([+-]\d{2,4})?")


def _files(shared_data: Path) -> list[Path]:
    files = sorted((shared_data / "e2b").glob("*/*.xml"))
    if not files:
        pytest.skip(f"no E2B samples under {shared_data / 'e2b'}")
    return files


def _one(shared_data: Path, relative: str) -> Report:
    path = shared_data / "e2b" / relative
    if not path.exists():
        pytest.skip(f"{relative} not in the shared data")
    reports = list(iter_reports(path))
    assert len(reports) == 1, relative
    return reports[0]


def _all_reports(shared_data: Path) -> Iterator[tuple[Path, Report]]:
    for path in _files(shared_data):
        for report in iter_reports(path):
            yield path, report


def test_every_sample_parses_with_reports(shared_data: Path) -> None:
    formats = {}
    for path in _files(shared_data):
        reports = list(iter_reports(path))
        assert reports, f"{path.name}: no report"
        expected = "R2" if path.parent.name.startswith("r2") else "R3"
        assert {r.format for r in reports} == {expected}, path.name
        formats[path.name] = len(reports)
    assert len(formats) >= 20


def test_paths_unique_labels_known_and_values_present(shared_data: Path) -> None:
    for path, report in _all_reports(shared_data):
        paths = [f.path for f in report.text_fields] + [f.path for f in report.structured_fields]
        assert len(paths) == len(set(paths)), f"{path.name}: duplicate paths"
        assert report.case_id and report.report_id and report.version
        for field in report.structured_fields:
            assert field.label in LABELS
            assert field.value and field.value == field.value.strip()
        for field in report.text_fields:
            assert field.text.strip()


def test_dates_are_e2b_values(shared_data: Path) -> None:
    for path, report in _all_reports(shared_data):
        for field in report.structured_fields:
            if field.label == "DATE" and report.format == "R3":
                assert _E2B_DATE.fullmatch(field.value), (path.name, field.path)


def test_no_r3_time_stamp_is_left_behind(shared_data: Path) -> None:
    """Every full date in a message (a ``value`` of 8+ digits without a unit) is a DATE field.

    Independent of the extractor's own rule: it catches dates lost to an
    unforeseen location. The batch wrapper's creationTime is not a report's.
    """
    full_date = re.compile(r"\d{8}")
    for path in _files(shared_data):
        if not path.parent.name.startswith("r3"):
            continue
        root = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
        stamps = sorted(
            el.get("value") for el in root.iter(etree.Element)
            if full_date.match(el.get("value") or "") and el.get("unit") is None
            and el.getparent() is not root
        )
        dates = sorted(f.value for r in iter_reports(path) for f in r.structured_fields
                       if f.label == "DATE" and full_date.match(f.value))
        assert dates == stamps, path.name


def test_faers_scenario1(shared_data: Path) -> None:
    r = _one(shared_data, "r3_fda_faers/FAERS2022Scenario1.xml")
    assert (r.format, r.case_id, r.report_id) == ("R3", "US-APHARMA-8744554B", "US-APHARMA-8744554B")
    assert r.version == "20140714151617-0500"  # C.1.2
    assert r.received_date == "20220614101010-0500"  # C.1.5
    assert r.sender == "Big Pharma Drug"
    assert r.country == "US"
    narrative = r.text("narrative")
    assert narrative is not None and narrative.startswith("Case Narrative Including Clinical Course")
    assert (r.text("reporter_comment") or "").startswith("Repoeter")
    assert (r.text("sender_comment") or "").startswith("Sender")
    assert r.text("medical_history_text[0]") == "None"
    assert r.text("reaction_for_translation[0]") is not None
    assert r.value("patient.initials") == "JD"
    assert r.value("patient.birth_date") == "20010615"
    assert r.value("patient.age") == "48"
    assert r.value("reaction[0].start_date") == "20141010"
    assert r.value("reaction[1].start_date") == "20141010"
    assert r.value("report.first_received_date") == "20220614101010-0500"
    assert r.value("message.creation_time") == "20140714151617-0500"
    assert r.value("reporter[0].given_name") == "Roger"
    assert r.value("reporter[0].family_name") == "Robertson"
    assert r.value("reporter[0].city") == "Metropolis"
    assert r.value("reporter[0].postcode") == "65498"
    assert r.value("reporter[0].telephone") == "6102227777"
    assert r.value("reporter[0].email") == "alladdresses@site.com"
    assert r.value("sender.fax") == "6109991122"
    assert r.value("sender.email") == "emailAddress@company.com"
    assert r.value("sender.family_name") == "Conner"
    labels = {f.path: f.label for f in r.structured_fields}
    assert labels["reporter[0].street"] == "LOCATION"
    assert labels["reporter[0].telephone"] == "PHONE"
    assert labels["patient.age"] == "AGE"
    assert labels["patient.initials"] == "NAME"


def test_faers_scenario6_mega_instance(shared_data: Path) -> None:
    r = _one(shared_data, "r3_fda_faers/FAERS2022Scenario6.xml")
    assert r.value("patient.gp_record_number") == "83444908"
    assert r.value("patient.specialist_record_number") == "8999-B"
    assert r.value("patient.hospital_record_number") == "3333444A32"
    assert r.value("patient.investigation_number") == "09233347580934"
    assert r.value("patient.death_date") == "20090101"
    assert (r.value("parent.initials") or "").startswith("Mr. John")
    assert r.value("parent.age") == "33"
    assert r.value("parent.drug_history[3].start_date") == "2009"
    assert r.value("parent.drug_history[0].start_date") == "20090101151617-0500"
    assert r.value("reporter[0].middle_name") == "James"
    assert r.value("reporter[0].street_2") == "Apartment 4G"
    assert r.value("reporter[0].organization") == "Pharma Company"
    assert r.value("reporter[0].department") == "Reporting"
    assert r.value("reporter[1].family_name") == "Rhodes"
    assert r.value("sender.middle_name") == "Castile"
    assert r.value("drug[0].dosage[0].start_date") == "20090101"
    assert r.text("reaction_as_reported[0]") == "consciência alterada"
    assert (r.text("test_result_comment[0]") or "").startswith("These results")
    assert (r.text("test_result_unstructured[6]") or "").startswith("The over all outcome")
    assert (r.text("drug_additional_info[0]") or "").startswith("Somthing seemed")
    assert (r.text("drug_dosage_text[0][0]") or "").startswith("unstructured dosing")
    assert (r.text("medical_history_comment[1]") or "").startswith("The condition was")
    assert (r.text("parent_medical_history_comment[0]") or "").startswith("This is what")
    assert (r.text("cause_of_death_autopsy[0]") or "").startswith("What we learned")
    assert r.text("document_title[0]") == "Sample Autopsy Report"
    assert "Author" in (r.text("literature_reference[0]") or "")
    # the base64 attachments (most of the 2 MB file) are not text fields
    assert sum(len(f.text) for f in r.text_fields) < 5000


def test_ich_example1(shared_data: Path) -> None:
    r = _one(shared_data, "r3_ich_examples/example1.xml")
    assert r.case_id == "JP-DSJP-DSJ-2009-98765-1"
    assert r.report_id == "DSJ-2009-98765"
    assert r.version == "20120720100001+09"
    assert r.received_date == "20101015"
    assert r.sender == "Daiichi Sankyo Company, Limited"
    assert r.country == "JP"
    assert (r.text("narrative") or "").startswith("An 81-year-old")
    assert r.value("patient.initials") == "T.O."
    assert r.value("patient.birth_date") == "19260412"
    assert r.value("reporter[0].organization") == "Kyushu University Hospital"
    assert r.value("reporter[0].family_name") == "Kudo"
    assert r.value("sender.telephone") == "+81-3-6225-1111"
    assert r.value("drug[0].dosage[0].start_date") == "200807"
    assert (r.text("test_result_unstructured[2]") or "").startswith("412 U/L")


def test_ich_example_hl7_2_masked_patient_and_parent(shared_data: Path) -> None:
    r = _one(shared_data, "r3_ich_examples/example_hl7_2.xml")
    assert r.case_id == "CA-HEALTHCANVIG-000123456"
    assert r.report_id == "CA-HCPOSTMARKET-F000789012"
    assert r.country == "CA"
    assert r.value("patient.initials") is None  # nullFlavor="MSK"
    assert r.value("parent.initials") == "Father"
    assert (r.text("reaction_for_translation[0]") or "").startswith("appears to be psoriasis")
    assert r.value("reaction[0].start_date") == "201205"


def test_caaers_rtog(shared_data: Path) -> None:
    r = _one(shared_data, "r2_caaers/E2B_RTOG-1106.xml")
    assert (r.format, r.case_id, r.report_id, r.version) == ("R2", "MAY27-001", "MAY27-001", "1")
    assert (r.text("narrative") or "").startswith("the description or narrative")
    assert r.text("reaction_as_reported[0]") == "nausea"
    assert r.text("test_result[0]") == "infectious agent"
    assert r.value("patient.investigation_number") == "RTOG-1106-testCcEmails1"
    assert r.value("reaction[0].start_date") == "20140522"
    assert r.value("drug[1].devicedateexpiration") == "20151231"
    assert r.value("summary.ptdeathdate") == "19111111"
    assert r.value("submitter.given_name") == "Alfred"
    labels = {f.path: f.label for f in r.structured_fields}
    assert labels["recipient.emails"] == "EMAIL"
    assert labels["submitter.telephone"] == "PHONE"


def test_caaers_rave_dialect(shared_data: Path) -> None:
    r = _one(shared_data, "r2_caaers/e2b_plus_Rave_changes.xml")
    assert r.case_id == "CNMAR3-235"
    assert r.value("physician.email") == "joe.montona@semanticbits.com"
    assert r.value("physician.family_name") == "Montona"
    assert r.value("reporter[0].telephone") == "703-111-1221"
    assert r.value("reporter[0].given_name") == "tom"
    assert r.value("medical_history[1].start_date") == "20140225"
    assert r.text("narrative_extended") is not None
    # numeric test results are values, not text to de-identify
    assert not [f for f in r.text_fields if f.path.startswith("test_result")]


def test_caaers_contacts_inside_primarysource(shared_data: Path) -> None:
    r = _one(shared_data, "r2_caaers/baseline_performance_sample1.xml")
    assert r.value("reporter[0].telephone") == "703-111-1221"
    assert r.value("reporter[0].email") == "tom.brady@semanticbits.com"
    assert r.value("reporter[0].middle_name") is None  # <reportermiddlename /> is empty
    assert r.value("sender.email") == "alfred.nobel@dynamite.com"
    assert r.value("drug[0].end_date") == "20130806"
