"""The E2B reader's contract: dispatch on the root, every source type, safe failures.

Security matters here more than anywhere else in the reader: files come from
outside, so entity tricks (XXE, billion laughs) must do nothing, and error
messages -- which end up in logs and quarantine tables -- must never carry
document text.
"""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from deid_core.e2b import E2BParseError, Report, iter_reports, parse_reports
from deid_core.e2b.errors import BLANK, MALFORMED, NOT_XML
from deid_core.e2b.r3_codes import HL7_NS, MESSAGE
from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch

SECRET = "Bartholomew Quixley-Secretname"


def _r2(*reports: str) -> bytes:
    return ("<ichicsr>" + "".join(f"<safetyreport>{r}</safetyreport>" for r in reports) + "</ichicsr>").encode()


def _message_only(batch: bytes) -> bytes:
    """The first PORR message of a batch as a document of its own (a bare message)."""
    root = etree.fromstring(batch)
    message = next(root.iter(f"{{{HL7_NS}}}{MESSAGE}"))
    return etree.tostring(message, xml_declaration=True, encoding="utf-8")


# --- dispatch and sources -----------------------------------------------------------------


def test_r2_minimal_report_and_defaults() -> None:
    (report,) = parse_reports(_r2("<safetyreportid>X-1</safetyreportid>"))
    assert isinstance(report, Report)
    assert (report.format, report.case_id, report.report_id, report.version) == ("R2", "X-1", "X-1", "1")
    assert report.received_date is None and report.sender is None
    assert report.text_fields == () and report.structured_fields == ()


def test_r2_case_id_prefers_worldwide_number_and_receipt_date() -> None:
    (report,) = parse_reports(_r2(
        "<safetyreportversion>3</safetyreportversion><safetyreportid>S-1</safetyreportid>"
        "<receivedate>20140101</receivedate><receiptdate>20140301</receiptdate>"
        "<companynumb>US-ACME-1</companynumb>"
        "<sender><senderorganization>Acme</senderorganization></sender>"))
    assert (report.case_id, report.report_id, report.version) == ("US-ACME-1", "S-1", "3")
    assert report.received_date == "20140301"
    assert report.sender == "Acme"
    (other,) = parse_reports(_r2(
        "<safetyreportid>S-1</safetyreportid><companynumb>C</companynumb>"
        "<worldwideuniqcaseidentificationnumber>W</worldwideuniqcaseidentificationnumber>"))
    assert other.case_id == "W"


def test_r2_text_and_structured_fields() -> None:
    (report,) = parse_reports(_r2(
        "<safetyreportid>S-1</safetyreportid>"
        "<primarysource><reportergivename>Ann</reportergivename><reporterfamilyname>Lee</reporterfamilyname>"
        "<reportercity>Oslo</reportercity><literaturereference>Lee A. et al.</literaturereference></primarysource>"
        "<sender><senderorganization>Acme</senderorganization><sendertel>555 0101</sendertel>"
        "<senderemailaddress>pv@acme.test</senderemailaddress></sender>"
        "<patient><patientinitial>AB</patientinitial><patientbirthdateformat>102</patientbirthdateformat>"
        "<patientbirthdate>19500101</patientbirthdate><patientonsetage>64</patientonsetage>"
        "<patientgpmedicalrecordnumb>GP-9</patientgpmedicalrecordnumb>"
        "<patientmedicalhistorytext>Seen by Dr Who</patientmedicalhistorytext>"
        "<reaction><primarysourcereaction>rash</primarysourcereaction></reaction>"
        "<reaction><primarysourcereaction>itch</primarysourcereaction>"
        "<reactionstartdate>20140105</reactionstartdate></reaction>"
        "<test><testresult>12.5</testresult></test><test><testresult>positive</testresult></test>"
        "<drug><drugstartdate>201401</drugstartdate><drugadditional>given by nurse Kim</drugadditional></drug>"
        "<summary><narrativeincludeclinical> A patient. </narrativeincludeclinical>"
        "<senderdiagnosis>Anaphylaxis</senderdiagnosis></summary></patient>"))
    texts = {f.path: f.text for f in report.text_fields}
    assert texts == {
        "literature_reference[0]": "Lee A. et al.",
        "medical_history_text[0]": "Seen by Dr Who",
        "reaction_as_reported[0]": "rash",
        "reaction_as_reported[1]": "itch",
        "test_result[1]": "positive",
        "drug_additional_info[0]": "given by nurse Kim",
        "narrative": " A patient. ",
        "sender_diagnosis": "Anaphylaxis",
    }
    fields = {f.path: (f.label, f.value) for f in report.structured_fields}
    assert fields == {
        "reporter[0].given_name": ("NAME", "Ann"),
        "reporter[0].family_name": ("NAME", "Lee"),
        "reporter[0].city": ("LOCATION", "Oslo"),
        "sender.telephone": ("PHONE", "555 0101"),
        "sender.email": ("EMAIL", "pv@acme.test"),
        "patient.initials": ("NAME", "AB"),
        "patient.birth_date": ("DATE", "19500101"),
        "patient.age": ("AGE", "64"),
        "patient.gp_record_number": ("ID", "GP-9"),
        "reaction[1].start_date": ("DATE", "20140105"),
        "drug[0].start_date": ("DATE", "201401"),
    }


def test_r2_batch_of_many_reports_all_come_out_in_order() -> None:
    data = _r2(*(f"<safetyreportid>R-{i}</safetyreportid>" for i in range(50)))
    assert [r.case_id for r in iter_reports(data)] == [f"R-{i}" for i in range(50)]


def test_r3_bare_message_root() -> None:
    batch = synthetic_r3_batch(1, 11)
    (from_batch,) = parse_reports(batch)
    (bare,) = parse_reports(_message_only(batch))
    assert bare == from_batch


def test_r3_is_namespace_tolerant() -> None:
    batch = synthetic_r3_batch(2, 12)
    expected = parse_reports(batch)
    no_namespace = batch.replace(b' xmlns="urn:hl7-org:v3"', b"")
    assert b"urn:hl7-org:v3" not in no_namespace
    assert parse_reports(no_namespace) == expected
    prefixed = re.sub(rb"<(/?)(?=[A-Za-z])", rb"<\1hl7:", no_namespace.split(b"?>", 1)[1])
    prefixed = prefixed.replace(b"<hl7:MCCI_IN200100UV01 ", b'<hl7:MCCI_IN200100UV01 xmlns:hl7="urn:other" ', 1)
    assert parse_reports(prefixed) == expected


def test_r3_case_id_falls_back_to_report_id() -> None:
    doc = (f'<{MESSAGE} xmlns="{HL7_NS}"><controlActProcess><subject><investigationEvent>'
           '<id root="2.16.840.1.113883.3.989.2.1.3.1" extension="REP-1"/>'
           f'</investigationEvent></subject></controlActProcess></{MESSAGE}>').encode()
    (report,) = parse_reports(doc)
    assert (report.case_id, report.report_id, report.version) == ("REP-1", "REP-1", "1")


def test_all_source_types_agree(tmp_path: Path) -> None:
    data = synthetic_r2_batch(3, 13)
    path = tmp_path / "batch.xml"
    path.write_bytes(data)
    expected = parse_reports(data)
    assert len(expected) == 3
    assert list(iter_reports(path)) == expected
    assert list(iter_reports(str(path))) == expected
    assert list(iter_reports(io.BytesIO(data))) == expected
    assert list(iter_reports(bytearray(data))) == expected
    with path.open("rb") as fh:
        assert list(iter_reports(fh)) == expected


def test_unsupported_source_type() -> None:
    with pytest.raises(TypeError):
        list(iter_reports(12345))  # type: ignore[arg-type]


# --- refusals and error messages ----------------------------------------------------------------


def test_unknown_root_is_refused_before_reading_on() -> None:
    with pytest.raises(E2BParseError) as err:
        list(iter_reports(b"<html><body>" + SECRET.encode() + b"</body></html>"))
    assert str(err.value) == "root element html is neither ichicsr nor MCCI_IN200100UV01/PORR_IN049016UV"


def test_unprintable_root_name_is_not_echoed() -> None:
    with pytest.raises(E2BParseError) as err:
        list(iter_reports("<Müller_Hans/>".encode()))
    assert "Müller" not in str(err.value) and "<unprintable>" in str(err.value)


@pytest.mark.parametrize("doc, line", [
    (b"<ichicsr>\n<safetyreport>\n<safetyreportid>" + SECRET.encode() + b"</safetyreport>\n</ichicsr>", 3),
    (b"<ichicsr><safetyreport><x>" + SECRET.encode() + b" & co</x></safetyreport></ichicsr>", 1),
    (b"<?xml version='1.0'?>\n\n<ichicsr><safetyreport>" + SECRET.encode(), 3),
])
def test_malformed_xml_message_has_no_text(doc: bytes, line: int) -> None:
    with pytest.raises(E2BParseError) as err:
        list(iter_reports(doc))
    message = str(err.value)
    assert message.startswith(f"not well-formed XML at line {line}")
    for word in SECRET.replace("-", " ").split():
        assert word not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize("doc", [b"", b" \n\t", b"\xef\xbb\xbf \n", "  \n".encode("utf-16")])
def test_blank_document(doc: bytes) -> None:
    with pytest.raises(E2BParseError, match="no XML content") as err:
        list(iter_reports(doc))
    assert err.value.kind == BLANK


@pytest.mark.parametrize("doc", [bytes(range(256)) * 3, b"MZ\x90\x00\x03", b"Dear Dr Smith, the patient", b"\x00\x00<"])
def test_data_that_is_not_xml_is_named_so(doc: bytes) -> None:
    with pytest.raises(E2BParseError) as err:
        list(iter_reports(doc))
    assert err.value.kind == NOT_XML and str(err.value).startswith("not XML")
    assert "Smith" not in str(err.value)


@pytest.mark.parametrize("doc", [b"<?xml version='1.0'?>\n", b"<!DOCTYPE x>", b"<?xml version=?><a/>", b"<ichicsr><"])
def test_markup_without_a_usable_root_is_malformed(doc: bytes) -> None:
    with pytest.raises(E2BParseError) as err:
        list(iter_reports(doc))
    assert err.value.kind == MALFORMED and "ERR_DOCUMENT_EMPTY" not in str(err.value)


def test_reports_before_a_syntax_error_are_yielded() -> None:
    good = _r2(*(f"<safetyreportid>R-{i}</safetyreportid>" for i in range(3)))[:-len(b"</ichicsr>")]
    reports = []
    with pytest.raises(E2BParseError):
        for report in iter_reports(good + b"<safetyreport><safetyreportid>bad</oops>"):
            reports.append(report)
    assert [r.case_id for r in reports] == ["R-0", "R-1", "R-2"]


def test_report_without_a_case_id() -> None:
    with pytest.raises(E2BParseError) as err:
        list(iter_reports(_r2("<safetyreportid>A</safetyreportid>",
                              "<patient><patientinitial>" + SECRET + "</patientinitial></patient>")))
    assert str(err.value) == "report without a case id (report 2 of the file)"


def test_message_without_investigation_event() -> None:
    with pytest.raises(E2BParseError, match="without an investigationEvent"):
        list(iter_reports(f'<{MESSAGE} xmlns="{HL7_NS}"/>'.encode()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyzÄÖÜß", min_size=12, max_size=40),
       cut=st.integers(min_value=1, max_value=400))
def test_error_messages_never_contain_document_text(secret: str, cut: int) -> None:
    """Whatever the damage (a truncation anywhere), the error names no document text."""
    doc = _r2(f"<safetyreportid>{secret}</safetyreportid><patient><patientinitial>{secret}</patientinitial>"
              f"</patient>")
    try:
        list(iter_reports(doc[:cut]))
    except E2BParseError as exc:
        assert secret not in str(exc)
        assert secret[:8] not in str(exc)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_e2b_parse_error(data: bytes) -> None:
    try:
        reports = list(iter_reports(data))
    except E2BParseError:
        return
    assert all(isinstance(r, Report) for r in reports)


# --- hostile XML --------------------------------------------------------------------------------


def _r3_with_narrative(narrative: str) -> bytes:
    return (f'<{MESSAGE} xmlns="{HL7_NS}"><controlActProcess><subject><investigationEvent>'
            '<id root="2.16.840.1.113883.3.989.2.1.3.1" extension="X-1"/>'
            f'<text>{narrative}</text></investigationEvent></subject></controlActProcess></{MESSAGE}>')


def _r2_with_narrative(narrative: str) -> str:
    return ("<ichicsr><safetyreport><safetyreportid>X-1</safetyreportid><patient><summary>"
            f"<narrativeincludeclinical>{narrative}</narrativeincludeclinical></summary></patient>"
            "</safetyreport></ichicsr>")


@pytest.mark.parametrize("fmt", ["R2", "R3"])
def test_external_entity_is_not_resolved(fmt: str, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    body = (_r2_with_narrative if fmt == "R2" else _r3_with_narrative)("Before &xxe; after")
    root = "ichicsr" if fmt == "R2" else MESSAGE
    doc = (
        f'<?xml version="1.0"?>\n<!DOCTYPE {root} [\n'
        f'  <!ENTITY xxe SYSTEM "{secret_file.as_uri()}">\n'
        f'  <!ENTITY % remote SYSTEM "{secret_file.as_uri()}">\n'
        f'  %remote;\n]>\n{body}'
    ).encode()
    reports = list(iter_reports(doc))
    assert SECRET not in repr(reports)
    narrative = reports[0].text("narrative")
    assert narrative is not None and narrative.startswith("Before ") and SECRET not in narrative


def test_external_dtd_is_not_loaded(tmp_path: Path) -> None:
    """A DTD on disk that would define an entity holding secret text is never read."""
    dtd = tmp_path / "evil.dtd"
    dtd.write_text(f'<!ENTITY leak "{SECRET}">')
    doc = (f'<?xml version="1.0"?>\n<!DOCTYPE ichicsr SYSTEM "{dtd.as_uri()}">\n'
           + _r2_with_narrative("x &leak; y")).encode()
    try:
        reports = list(iter_reports(doc))
    except E2BParseError as exc:  # refusing the document is as good as not loading it
        assert SECRET not in str(exc)
        return
    assert SECRET not in repr(reports)


def test_billion_laughs_is_not_expanded() -> None:
    entities = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol%s;" % ("" if i == 1 else i - 1)) * 10}">' for i in range(1, 10)]
    doc = (
        '<?xml version="1.0"?>\n<!DOCTYPE ichicsr [' + "".join(entities) + "]>"
        "<ichicsr><safetyreport><safetyreportid>X-1</safetyreportid><patient><summary>"
        "<narrativeincludeclinical>&lol9;</narrativeincludeclinical></summary></patient>"
        "</safetyreport></ichicsr>"
    ).encode()
    started = time.monotonic()
    try:
        reports = list(iter_reports(doc))
    except E2BParseError:
        reports = []
    assert time.monotonic() - started < 5
    for report in reports:
        assert all(len(f.text) < 100 for f in report.text_fields)


def test_comments_and_processing_instructions_are_not_text() -> None:
    (report,) = parse_reports(_r2(
        "<safetyreportid>X</safetyreportid><patient><summary><narrativeincludeclinical>"
        "Seen<!-- by Dr Hidden --> today<?pi hidden?></narrativeincludeclinical></summary></patient>"))
    assert report.text("narrative") == "Seen today"


def test_r3_minimal_message_fields() -> None:
    """Hand-written R3 pieces: comment authors, telecoms, name parts and the date sweep."""
    ich = "2.16.840.1.113883.3.989.2.1.1.19"
    doc = f"""<{MESSAGE} xmlns="{HL7_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
      <creationTime value="20200105120000"/>
      <controlActProcess><effectiveTime value="20200105120001"/><subject><investigationEvent>
        <id root="2.16.840.1.113883.3.989.2.1.3.1" extension="S-1"/>
        <id root="2.16.840.1.113883.3.989.2.1.3.2" extension="W-1"/>
        <text>Narrative</text>
        <availabilityTime value="20200104"/>
        <component><adverseEventAssessment>
          <subject1><primaryRole>
            <player1><name><given>Ann</given><given>Beth</given><family>Cole</family></name></player1>
            <subjectOf2><observation><code code="3" codeSystem="{ich}"/>
              <value xsi:type="PQ" value="93" unit="a"/></observation></subjectOf2>
            <subjectOf2><organizer><code code="3" codeSystem="2.16.840.1.113883.3.989.2.1.1.20"/>
              <component><observation><code code="1"/><effectiveTime value="20191230"/>
                <value xsi:type="IVL_PQ"><low value="10" unit="mg"/><high value="20" unit="mg"/></value>
              </observation></component></organizer></subjectOf2>
          </primaryRole></subject1>
          <component><causalityAssessment><effectiveTime value="20200102"/></causalityAssessment></component>
          <component1><observationEvent><code code="10" codeSystem="{ich}"/><value xsi:type="ED">No author</value>
          </observationEvent></component1>
          <component1><observationEvent><code code="15" codeSystem="{ich}"/>
            <value xsi:type="CE" code="1"><originalText>Own words</originalText></value></observationEvent></component1>
        </adverseEventAssessment></component>
        <outboundRelationship><relatedInvestigation><code code="2"/><subjectOf2><controlActEvent><author>
          <assignedEntity><telecom value="555-0101"/><telecom value="x@y.test"/><telecom value="http://a.test"/>
          </assignedEntity></author></controlActEvent></subjectOf2></relatedInvestigation></outboundRelationship>
      </investigationEvent></subject></controlActProcess></{MESSAGE}>""".encode()
    (report,) = parse_reports(doc)
    assert (report.case_id, report.report_id, report.version) == ("W-1", "S-1", "20200105120001")
    assert report.received_date == "20200104"
    assert report.text("comment[0]") == "No author"
    assert report.text("sender_diagnosis[0]") == "Own words"
    fields = {f.path: (f.label, f.value) for f in report.structured_fields}
    assert fields["patient.given_name"] == ("NAME", "Ann")
    assert fields["patient.middle_name"] == ("NAME", "Beth")
    assert fields["patient.family_name"] == ("NAME", "Cole")
    assert fields["patient.age"] == ("AGE", "93")
    assert fields["test[0].date"] == ("DATE", "20191230")
    assert fields["other_date[0]"] == ("DATE", "20200102")
    assert fields["reporter[0].telephone"] == ("PHONE", "555-0101")
    assert fields["reporter[0].email"] == ("EMAIL", "x@y.test")
    assert fields["reporter[0].telecom"] == ("OTHER", "http://a.test")
    assert not any(v in ("10", "20") for _, v in fields.values())  # quantities are not dates
