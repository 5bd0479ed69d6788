"""Context detectors: PHI made of words that are safe on their own."""

from __future__ import annotations

import pytest

from deid_core.rules.context import case_is_informative
from deid_core.rules.deidentifier import RuleDeidentifier
from deid_core.text.tokenize import tokenize


def hits(rules: RuleDeidentifier, text: str) -> dict[str, str]:
    toks = tokenize(text)
    flags = rules.effective_flags(toks)
    return {toks[h.token_index].text: h.detector for h in rules.context.find(text, toks, flags)}


def titled(rules: RuleDeidentifier, text: str) -> set[str]:
    """The words the title detector marks (another detector may also mark them)."""
    toks = tokenize(text)
    found = rules.context.find(text, toks, rules.effective_flags(toks))
    return {toks[h.token_index].text for h in found if h.detector == "titled_name"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("The patient was seen by Dr Tyro today.", {"Tyro"}),
        ("Mrs. J. Halfpenny called.", {"J", "Halfpenny"}),
        ("Dr. Sarah O'Driscoll spoke with family.", {"Sarah", "O", "Driscoll"}),
        ("PER DR TYRO DR KLEIN HAD TALKED", {"TYRO", "KLEIN"}),
        ("per dr tyro the plan is", {"tyro"}),
        # a word for what the person did ends the name in a note without case information
        ("DR RAKUSIN AWARE. MR DEXTER WORSENED", {"RAKUSIN", "DEXTER"}),
        ("dr. pica aware, dr walker notified", {"pica", "walker"}),
        ("DR EMEKA OBI CALLED", {"EMEKA", "OBI"}),
        # in a mixed-case note a capitalised second word stays part of the name
        ("Dr Emeka Aware called.", {"Emeka", "Aware"}),
    ],
)
def test_titled_names(rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    found = {w for w, d in hits(rules, text).items() if d == "titled_name"}
    assert found == names


def test_title_before_a_lower_case_word_in_normal_text_is_not_a_name(rules: RuleDeidentifier) -> None:
    text = "The patient told the dr that the Rash was better. Seen by Nurse today."
    assert "that" not in hits(rules, text)
    assert "today" not in hits(rules, text)


def test_surname_after_first_name(rules: RuleDeidentifier) -> None:
    found = hits(rules, "Yesterday Ferdinand Halfpenny and Mary W. Stone visited.")
    assert found.get("Halfpenny") == "name_sequence"
    assert found.get("Stone") == "name_sequence"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("transferred from Sacred Heart Hospital today", {"Sacred", "Heart"}),
        ("transferred from sacred heart hosp this afternoon", {"sacred", "heart"}),
        ("HE WORKS AT HARFORD MEMORIAL HOSPITAL", {"HARFORD", "MEMORIAL"}),
        ("Seen by Baltimore Rehab for rehab screening", {"Baltimore", "Rehab"}),
        ("returned to St. Mary's Hospital", {"St", "Mary", "s"}),
        ("admitted from University of Maryland yesterday", {"University", "of", "Maryland"}),
        ("PT ADMITTED FROM UNIVERSITY OF MARYLAND MEDICAL", {"UNIVERSITY", "OF", "MARYLAND", "MEDICAL"}),
        ("to go to St. Mary tomorrow", {"St", "Mary"}),
    ],
)
def test_institutions(rules: RuleDeidentifier, text: str, expected: set[str]) -> None:
    assert expected <= set(hits(rules, text))


def test_institution_head_without_a_name_marks_nothing(rules: RuleDeidentifier) -> None:
    assert hits(rules, "She was admitted to the hospital and later to rehab.") == {}
    assert hits(rules, "The hospital of origin was not known to the Reporter.") == {}


def test_addresses(rules: RuleDeidentifier) -> None:
    found = hits(rules, "She lives at 12 Elm St near the park.")
    assert {w for w, d in found.items() if d == "address"} == {"12", "Elm", "St"}
    assert hits(rules, "Gave 12 mg daily") == {}


@pytest.mark.parametrize("text", [
    "femur fracture. Na 129. GP Dr Price suspects doxazosin.",   # "129 GP Dr" across a full stop
    "STOPPED ON 09.06.2016. STATIONARY ADMISSION TOOK PLACE IN THE KLINIKUM",
    "PEEP FROM 25-22. ADJUSTED DRIVE PRESSURE",
])
def test_a_full_stop_after_the_number_ends_an_address(rules: RuleDeidentifier, text: str) -> None:
    assert "address" not in hits(rules, text).values()


def test_st_johns_wort_is_no_saints_place(rules: RuleDeidentifier) -> None:
    assert "saint_name" not in hits(rules, "She also bought St John's wort (Hypericum) tablets.").values()
    assert hits(rules, "She was seen at St Agnes today.").get("Agnes") in {"institution", "saint_name"}


def test_case_informativeness() -> None:
    assert case_is_informative(tokenize("The patient, a man from Boston, was seen by Dr Smith today."))
    assert not case_is_informative(tokenize("PT SEEN BY DR SMITH TODAY, STABLE."))
    assert not case_is_informative(tokenize("pt seen by dr smith today, stable."))
    assert not case_is_informative([])


def test_institution_word_after_a_first_name_is_no_surname(rules: RuleDeidentifier) -> None:
    found = hits(rules, "seen at St. Agnes Hospital, Baltimore")
    assert found.get("Agnes") in {"institution", "saint_name"}
    assert found.get("Hospital") != "name_sequence"


@pytest.mark.parametrize("text", ["CARDIAC: SB/SR 50-60s w/ occ PVCs.", "MS- PT SEDATE ON 5 ATIVAN.",
                                  "MS-ALERT AND ORIENTED", "QTc 591 ms. Oxcarbazepine was stopped."])
def test_a_title_word_as_a_section_header_or_before_a_number_is_no_name(rules: RuleDeidentifier, text: str) -> None:
    # "SR" is sinus rhythm before its rate, "MS-" the mental-status header, "591 ms." a unit: no name follows
    assert "titled_name" not in hits(rules, text).values()


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # a word only safe lists know ends the name: in a note whose case says nothing, after a surname
        ("CK DRAWN AT 1515. DR JONES AWARE.", {"JONES"}),
        ("dr rothman aware, wt up 3kg", {"rothman"}),
        # a surname no list knows may be a given name: the next word is kept with it ...
        ("dr parrilli weiss, wt up 3kg", {"parrilli", "weiss"}),
        # ... unless it says what the person did ("aware", "notified", "spoke"): no surname is written so
        ("dr parrilli aware, wt up 3kg", {"parrilli"}),
        ("COMFORT MEASURES ONLY. DR RIDLON SPOKE WITH WIFE", {"RIDLON"}),
        # ... and after a full stop in any note
        ("Family meeting with pcp Dr Smith. Family has decided to continue.", {"Smith"}),
        # a given name is followed by its surname, which may be a common word; so in a mixed-case note
        ("CONSULTED DR EMEKA OBI TODAY", {"EMEKA", "OBI"}),
        ("Reporter: consultant neurologist Dr Emeka Obi, Downsview General Hospital", {"Emeka", "Obi"}),
        ("Patient: Mr Goh Boon Huat, 62, retired engineer", {"Goh", "Boon"}),
    ],
)
def test_a_safe_word_after_a_titled_name_ends_it(rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    assert titled(rules, text) == names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("SR W FREQ PACS ON PO AMIODARONE", set()),
        ("hr 80's sr w/ occ pvc's", set()),
        ("CV: Patient remains in SR. No AF noted.", set()),
        ("SR C ST WHEN RETCHING", set()),
        # Señor, Sister: "Sr" written so, or with a full stop before a name or an initial
        ("Paciente: Sr. Joaquim Esteves, 68 anos", {"Joaquim", "Esteves"}),
        ("Study nurse: Sr Nomvula Khumalo, cell on file", {"Nomvula", "Khumalo"}),
        ("SR. HIDALGO, OF 55 YEARS, RECEIVED", {"HIDALGO"}),
        ("Sr. C., of 59 years, received", {"C"}),
    ],
)
def test_sr_is_the_rhythm_unless_written_as_a_title(rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    assert titled(rules, text) == names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("social: md will call son tom baker regarding drains", {"tom", "baker"}),
        ("His wife Mary reported the rash.", {"Mary"}),
        ("SPOKE WITH DAUGHTER, SUSAN, AT LENGTH", {"SUSAN"}),
        # a list of relatives, or a word after the kinship word that no name list knows, is no name
        ("Family: wife, son and brother in to visit.", set()),
        ("son and husband visited; daughter called", set()),
        ("wife will call back", set()),
    ],
)
def test_names_after_a_kinship_word(rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    found = {w for w, d in hits(rules, text).items() if d == "kin_name"}
    assert found == names


def test_kin_names_are_context_hits_that_only_add_masking(rules: RuleDeidentifier) -> None:
    a = rules.analyse("His wife Mary Smith called.")
    by = {t.text: (a.unsafe[i], a.reasons[i], a.labels[i]) for i, t in enumerate(a.tokens)}
    assert by["Mary"] == (True, "context:kin_name", "NAME")
    # the surname is found by the first-name detector too: either context reason will do
    assert by["Smith"][0] and by["Smith"][1].startswith("context:") and by["Smith"][2] == "NAME"
    assert not by["wife"][0] and not by["called"][0]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Her doctor at Pleasant Grove Family Medicine doubled the dose.",
         {"Pleasant", "Grove", "Family", "Medicine"}),
        ("Referral was made to Nationwide Allergy Associates last week.", {"Nationwide", "Allergy", "Associates"}),
        ("She fainted at work (Front Range Credit Union) and hit her head.", {"Front", "Range", "Credit", "Union"}),
        ("He was brought to Queen Alexandra Emergency Department by a friend.",
         {"Queen", "Alexandra", "Emergency", "Department"}),
        ("A scan at Great Western Women's Unit dated the pregnancy.", {"Great", "Western", "Women", "s", "Unit"}),
        ("The tooth was pulled at Bright Smile Dental and she was given an antibiotic.",
         {"Bright", "Smile", "Dental"}),
    ],
)
def test_organisations_before_an_everyday_head(rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    found = {w for w, d in hits(rules, text).items() if d == "organisation"}
    assert found == names


@pytest.mark.parametrize(
    "text",
    [
        # kinds of facility, no name among them
        "She was moved to the Medical Intensive Care Unit overnight.",
        "Internal Medicine and the ENT Department were consulted.",
        "The patient waited in the Immunizations Department for 15 minutes.",
        "Resp Care Note: Pt remains on the vent.",
        # a header in capitals, and lower case where capitals carry information
        "PMICU NURSING PROGRESS NOTE: Stable overnight, no events.",
        "She went to the family medicine clinic and the dental unit.",
        # a product's programme is no place; a full stop ends a name
        "Enrolled in the Humira Complete Services programme by the nurse.",
        "The dose was given by Dr Smith. Care was handed over at noon.",
    ],
)
def test_facility_words_alone_name_no_organisation(rules: RuleDeidentifier, text: str) -> None:
    assert "organisation" not in hits(rules, text).values()


def test_organisations_need_case_information(rules: RuleDeidentifier) -> None:
    # in all-capital text "BRIGHT SMILE DENTAL" cannot be told from a header; the other detectors stay
    assert "organisation" not in hits(rules, "TOOTH PULLED AT BRIGHT SMILE DENTAL TODAY, GIVEN ANTIBIOTIC.").values()


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("He was stopped by officers on Route 9W near the bridge.", {"Route", "9W"}),
        ("Crash on Highway 101 at night; she was brought in by ambulance.", {"Highway", "101"}),
        ("Administered at: Plainview Municipal Fire Station 3. No reaction.",
         {"Plainview", "Municipal", "Fire", "Station", "3"}),
    ],
)
def test_numbered_places(rules: RuleDeidentifier, text: str, place: set[str]) -> None:
    assert {w for w, d in hits(rules, text).items() if d == "numbered_place"} == place


@pytest.mark.parametrize(
    "text",
    [
        "Route: oral. Dose 2 of 3 given.",  # a route of administration, no number after it
        "The route 2 was changed to IV.",  # lower case
        "Station 0 is a code, not a place.",  # a leading zero is no road or station number
        "Station 3.5 mL was drawn up.",  # a decimal is a value
        "ROUTE 9 CLOSED, PT ARRIVED LATE.",  # capitals carry no case information
    ],
)
def test_no_numbered_place(rules: RuleDeidentifier, text: str) -> None:
    assert "numbered_place" not in hits(rules, text).values()


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Labs from Jan 8 at LabCorner on Tunnel Rd: CRP 14 (was 3).", {"Tunnel", "Rd"}),
        ("Well Pharmacy, Bury Old Road, Prestwich.", {"Bury", "Old", "Road"}),
        ("She lives off Harbour Lane near the school.", {"Harbour", "Lane"}),
    ],
)
def test_street_names_without_a_house_number(rules: RuleDeidentifier, text: str, street: set[str]) -> None:
    assert {w for w, d in hits(rules, text).items() if d == "address"} == street


@pytest.mark.parametrize(
    "text",
    [
        "The treating physician, Dr Wendell Lane, was contacted.",  # a title: a person, not a street
        "Road traffic accident on the way home.",  # a street word opening a sentence
        "She walked down the road to the lane.",  # lower case
        "ON MAIN ROAD, PT FELL.",  # capitals carry no case information
    ],
)
def test_no_street_without_a_number(rules: RuleDeidentifier, text: str) -> None:
    found = {w for w, d in hits(rules, text).items() if d == "address"}
    assert not found & {"Dr", "Road", "road", "lane", "ROAD", "MAIN"}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Boots store, High Street, Kettering NN16 0AF. Date of incident", {"NN16", "0AF"}),
        ("Holloway Road, Leeds LS6 2QT - Tel", {"LS6", "2QT"}),
        ("Patient postal code M6J 1H4.", {"M6J", "1H4"}),
        ("Ottawa ON K1A 0B1", {"K1A", "0B1"}),
    ],
)
def test_british_and_canadian_postcodes(rules: RuleDeidentifier, text: str, code: set[str]) -> None:
    assert {w for w, d in hits(rules, text).items() if d == "postcode"} == code


@pytest.mark.parametrize("text", ["T2 4MG tumour", "CD4 350 cells", "lot AB1 2CD3", "NN16  0AF", "nn16 0af"])
def test_no_postcode(rules: RuleDeidentifier, text: str) -> None:
    assert "postcode" not in hits(rules, text).values()


def test_assisted_living_is_an_organisation_head(rules: RuleDeidentifier) -> None:
    text = "Pharmacist medication review - Sunnybrook Gardens Assisted Living, unit C-114."
    assert {w for w, d in hits(rules, text).items() if d == "organisation"} == {
        "Sunnybrook", "Gardens", "Assisted", "Living"}
    assert "organisation" not in hits(rules, "She moved to Assisted Living last spring.").values()


@pytest.mark.parametrize(("text", "expected"), [
    ("Resident Mrs E Pollard, room 14, 94 yrs.", {"room", "14"}),
    ("5 West bed 12, then ROOM 208B and Rm 612-B.", {"bed", "12", "ROOM", "208B", "Rm", "612", "B"}),
])
def test_a_room_or_bed_with_its_number_is_a_place(rules: RuleDeidentifier, text: str, expected: set[str]) -> None:
    found = hits(rules, text)
    assert {w for w, d in found.items() if d == "room"} == expected


def test_room_air_and_bed_rest_are_no_places(rules: RuleDeidentifier) -> None:
    assert "room" not in hits(rules, "on room air, bed rest, Bay of Plenty").values()


@pytest.mark.parametrize(("text", "expected"), [
    ("Lakshmi Diabetes and Endocrine Research Centre, Chennai", {"Lakshmi", "Diabetes", "and", "Endocrine", "Research", "Centre"}),
    ("Dr W, Owairaka Family Doctors, Auckland", {"Owairaka", "Family", "Doctors"}),
    ("lead, Abbeygate Vaccination Hub, Hexham", {"Abbeygate", "Vaccination", "Hub"}),
    ("Wenlock Edge Community Nursing Team. Visit", {"Wenlock", "Edge", "Community", "Nursing", "Team"}),
])
def test_organisation_names_with_more_heads_and_an_and(rules: RuleDeidentifier, text: str, expected: set[str]) -> None:
    found = hits(rules, text)
    assert {w for w, d in found.items() if d == "organisation"} == expected


def test_facility_words_alone_still_name_no_organisation(rules: RuleDeidentifier) -> None:
    assert "organisation" not in hits(rules, "seen by the Care Team in Intensive Care and Emergency").values()


def reasons_of(rules: RuleDeidentifier, text: str) -> dict[str, str]:
    a = rules.analyse(text)
    return {t.text: a.reasons[i] for i, t in enumerate(a.tokens)}


@pytest.mark.parametrize(("text", "word"), [
    # a full stop after a given name ends its sentence; the next capitalised word is no surname
    ("ETT pulled back 2cm per Dr. Martyn. Lungs are very coarse", "Lungs"),
    ("thermodilution and fick per Dr. Martyn. Thermodilution CO 11.18", "Thermodilution"),
    # the possessive ends a titled name
    ("rectal tube placed per dr. white's order. started on reglan", "order"),
    ("neuro: Mrs. McLaughlin's speech cont garbled", "speech"),
    # a whole-word title used as a noun: after a possessive, before a full stop, before a plain word
    ("was updated on his father's condition. Emily Parker,RN", "condition"),
    ("sedation increased via nurse. vols stable at 800's", "vols"),
    ("SEE MD NOTES AND NURSE ADMISSION NOTE. NEURO: PT", "ADMISSION"),
    # "SR." after another rhythm is a rhythm, no Señor
    ("NO ECTOPY NOTED. PATIENT IN A SB/SR. P WAVES VISIBLE.", "WAVES"),
])
def test_words_after_a_name_or_title_that_end_it(rules: RuleDeidentifier, text: str, word: str) -> None:
    assert not reasons_of(rules, text)[word].startswith("context"), text


def test_a_plural_title_keeps_the_names_after_it(rules: RuleDeidentifier) -> None:
    r = reasons_of(rules, "PT EXPIRED AT APPROX 0320. DR'S CAMARDA AND CLIFFORD REMAINED")
    assert r["CAMARDA"].startswith("context")
    assert r["S"] == "safe"


@pytest.mark.parametrize(("text", "st"), [
    ("CV: NSR to ST HR 90's-100 no ectopy noted.", "ST"),
    ("THALLIUM ST-BORDERLINE ISCHEMIC ST CHGS WO S/S.", "ST"),
    ("INTUBATION . SR TO ST. HIGH PRESSURES RESOLVED", "ST"),
    ("HR - 48 - 90 SB/ST. Pt. continues on NTG", "ST"),
    ("cardiac-> hr 90-100's, sr to st w/frequent pac's.", "st"),
])
def test_st_of_a_rhythm_or_an_ecg_is_no_saint(rules: RuleDeidentifier, text: str, st: str) -> None:
    assert "saint_name" not in reasons_of(rules, text)[st], text


@pytest.mark.parametrize(("text", "place"), [
    ("TO GO TO ST. MARY ON TUESDAY PER CASE WORKER", "MARY"),
    ("FOUND UNRESONSIVE IN ST MARY HOSPITAL.", "MARY"),
])
def test_a_saint_after_to_stays_a_place(rules: RuleDeidentifier, text: str, place: str) -> None:
    assert reasons_of(rules, text)[place].startswith("context"), text


@pytest.mark.parametrize(("text", "word"), [
    ("NEED TO ADDRESS CODE STATUS-HEALTH CARE PROXY.", "STATUS"),   # a role, no organisation
    ("WILL ALSO HAVE HOME HEALTH AID AND PT.", "HOME"),
    ("P: MONITOR RESP STATUS, BEGIN REHAB. RESTART DIG", "BEGIN"),   # a plain word before a service
    ("RESPONDS TO PAIN, PROPOFOL INC X2 TODAY", "PROPOFOL"),         # "inc" for increased
    ("residing in a nursing home. pt has 2 children", "nursing"),    # the article, no initial
])
def test_services_and_increases_are_no_institutions(rules: RuleDeidentifier, text: str, word: str) -> None:
    assert not reasons_of(rules, text)[word].startswith("context"), text


@pytest.mark.parametrize(("text", "name"), [
    ("TRANSFERRED FROM BALTIMORE REHAB YESTERDAY", "BALTIMORE"),
    ("seen at Acme Inc. on Monday", "Acme"),          # a company's name ends at its legal form
    ("seen at Bright Star Inc, Boston", "Bright"),
    ("TAKEN TO UNION HOSPITAL WHERE EKG POS", "UNION"),
])
def test_institutions_stay(rules: RuleDeidentifier, text: str, name: str) -> None:
    assert reasons_of(rules, text)[name] == "context:institution", text
