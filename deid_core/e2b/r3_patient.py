"""E2B(R3) sections D to G: patient, parent, reactions, tests and drugs.

All of them hang off ``adverseEventAssessment/subject1/primaryRole``: the
patient is ``player1``, the parent (D.10) is a ``role`` of the patient, and
everything else is a ``subjectOf2`` that is either an ``observation`` (age,
reaction, cause of death, ...) or an ``organizer`` grouping repeats (medical
history, drug history, tests, drugs). Which one is meant is told by
``code/@code`` (see :mod:`.r3_codes`), not by element names.

Index conventions: a repeating entity gets its index in document order
among entities of its kind (``reaction[1]``, ``drug[0]``), and a free-text
field that belongs to one entity carries that entity's index
(``reaction_as_reported[1]`` is reaction 1's verbatim term), so text and
structured fields of the same entity can be joined. Fields that may repeat
within one entity get a second index (``drug_dosage_text[0][1]`` is drug
0's second dosage).
"""

from __future__ import annotations

from deid_core.e2b import r3_codes as C
from deid_core.e2b.r3_parts import R3Fields, is_code, xsi_type
from deid_core.e2b.xmlnav import Element, attr, child, children, find, find_all, value_attr

_FREE_TEXT_TYPES = frozenset({"ED", "ST"})


def _obs(el: Element | None, code: str) -> bool:
    return is_code(el, code, C.OBSERVATION_CS)


def extract_primary_role(role: Element, f: R3Fields) -> None:
    """Everything under one ``primaryRole``: the patient and all D/E/F/G sections."""
    player = child(role, "player1")
    if player is not None:
        f.person_name("patient", child(player, "name"), whole="initials")
        f.date("patient.birth_date", child(player, "birthTime"))
        f.date("patient.death_date", child(player, "deceasedTime"))
        _record_numbers(player, f)
        for parent_role in children(player, "role"):
            _parent(parent_role, f)
    for subject in children(role, "subjectOf2"):
        for obs in children(subject, "observation"):
            _observation(obs, "patient", f)
        for organizer in children(subject, "organizer"):
            _organizer(organizer, "patient", f)


def _record_numbers(player: Element, f: R3Fields) -> None:
    """D.1.1.1-4: GP, specialist, hospital and investigation record numbers (ID)."""
    for entity in children(player, "asIdentifiedEntity"):
        ident = child(entity, "id")
        code = attr(child(entity, "code"), "code")
        field = C.ROOT_RECORD_NUMBERS.get(attr(ident, "root") or "") or C.RECORD_NUMBER_CODES.get(code or "")
        f.value(f"patient.{field or 'record_number'}", "ID", attr(ident, "extension"))


def _parent(role: Element, f: R3Fields) -> None:
    """D.10: the parent, when a parent's exposure caused the child's reaction."""
    person = child(role, "associatedPerson")
    if person is not None:
        f.person_name("parent", child(person, "name"), whole="initials")
        f.date("parent.birth_date", child(person, "birthTime"))
        f.date("parent.death_date", child(person, "deceasedTime"))
    for subject in children(role, "subjectOf2"):
        for obs in children(subject, "observation"):
            _observation(obs, "parent", f)
        for organizer in children(subject, "organizer"):
            _organizer(organizer, "parent", f)


def _observation(obs: Element, owner: str, f: R3Fields) -> None:
    """A single observation about the patient (or parent): age, LMP, reaction, death causes."""
    value = child(obs, "value")
    if _obs(obs, C.OBS_AGE):
        # D.2.2a / D.10.2.2a: the number only; the unit (D.2.2b) is not identifying
        f.value(f"{owner}.age", "AGE", value_attr(value))
    elif _obs(obs, C.OBS_LMP):
        f.date(f"{owner}.last_menstrual_date", value)
    elif owner == "patient" and _obs(obs, C.OBS_REACTION):
        _reaction(obs, f)
    elif _obs(obs, C.OBS_REPORTED_DEATH_CAUSE):
        # D.9.2.r.2 reported cause of death (free text)
        f.text(f"{owner_text(owner)}cause_of_death_reported[{f.out.next_index(owner + '.death_cause')}]",
               child(value, "originalText"))
    elif _obs(obs, C.OBS_AUTOPSY):
        # D.9.4.r.2 autopsy-determined cause of death (free text)
        for cause in find_all(obs, "outboundRelationship2/observation"):
            if _obs(cause, C.OBS_CAUSE_OF_DEATH):
                n = f.out.next_index(owner + ".autopsy_cause")
                f.text(f"{owner_text(owner)}cause_of_death_autopsy[{n}]",
                       child(child(cause, "value"), "originalText"))


def owner_text(owner: str) -> str:
    """Prefix of free-text paths: none for the patient, ``parent_`` for the parent."""
    return "" if owner == "patient" else f"{owner}_"


def owner_path(owner: str) -> str:
    """Prefix of entity paths: none for the patient's, ``parent.`` for the parent's."""
    return "" if owner == "patient" else f"{owner}."


def _reaction(obs: Element, f: R3Fields) -> None:
    """E.i: dates, the verbatim term (E.i.1.1a) and its translation (E.i.1.2)."""
    i = f.out.next_index("reaction")
    f.interval(f"reaction[{i}]", child(obs, "effectiveTime"))
    f.text(f"reaction_as_reported[{i}]", find(obs, "value/originalText"))
    for rel in find_all(obs, "outboundRelationship2/observation"):
        if _obs(rel, C.OBS_REACTION_TRANSLATION):
            f.text(f"reaction_for_translation[{i}]", child(rel, "value"))


def _organizer(organizer: Element, owner: str, f: R3Fields) -> None:
    code = attr(child(organizer, "code"), "code")
    components = list(find_all(organizer, "component"))
    if code == C.ORG_MEDICAL_HISTORY:
        for comp in components:
            for obs in children(comp, "observation"):
                _history_item(obs, owner, f)
    elif code == C.ORG_DRUG_HISTORY:
        for comp in components:
            for sa in children(comp, "substanceAdministration"):
                # D.8.r.4 / D.8.r.5 (D.10.8.r.4/5): start and end of past drug therapy
                r = f.out.next_index(owner + ".drug_history")
                f.interval(f"{owner_path(owner)}drug_history[{r}]", child(sa, "effectiveTime"))
    elif code == C.ORG_TESTS and owner == "patient":
        for comp in components:
            for obs in children(comp, "observation"):
                _test(obs, f)
    elif code == C.ORG_DRUGS and owner == "patient":
        for comp in components:
            for sa in children(comp, "substanceAdministration"):
                _drug(sa, f)


def _history_item(obs: Element, owner: str, f: R3Fields) -> None:
    """D.7.2 history text, or one D.7.1.r episode with its dates and comment (D.7.1.r.5)."""
    if _obs(obs, C.OBS_HISTORY_TEXT):
        n = f.out.next_index(owner + ".history_text")
        f.text(f"{owner_text(owner)}medical_history_text[{n}]", child(obs, "value"))
        return
    if _obs(obs, C.OBS_CONCOMITANT):
        return
    r = f.out.next_index(owner + ".medical_history")
    f.interval(f"{owner_path(owner)}medical_history[{r}]", child(obs, "effectiveTime"))
    for rel in find_all(obs, "outboundRelationship2/observation"):
        if _obs(rel, C.OBS_COMMENT):
            f.text(f"{owner_text(owner)}medical_history_comment[{r}]", child(rel, "value"))


def _test(obs: Element, f: R3Fields) -> None:
    """F.r: test date, unstructured result (F.r.3.4) and comments (F.r.6)."""
    r = f.out.next_index("test")
    f.interval(f"test[{r}]", child(obs, "effectiveTime"))
    value = child(obs, "value")
    if xsi_type(value) in _FREE_TEXT_TYPES:
        f.text(f"test_result_unstructured[{r}]", value)
    for rel in find_all(obs, "outboundRelationship2/observation"):
        if _obs(rel, C.OBS_COMMENT):
            f.text(f"test_result_comment[{r}]", child(rel, "value"))


def _drug(sa: Element, f: R3Fields) -> None:
    """G.k: dosage dates and text (G.k.4.r), indication as reported (G.k.7.r.1), G.k.11."""
    k = f.out.next_index("drug")
    f.interval(f"drug[{k}]", child(sa, "effectiveTime"))
    dosage = 0
    for rel in children(sa, "outboundRelationship2"):
        dose = child(rel, "substanceAdministration")
        if dose is not None:
            f.text(f"drug_dosage_text[{k}][{dosage}]", child(dose, "text"))
            f.interval(f"drug[{k}].dosage[{dosage}]", child(dose, "effectiveTime"))
            dosage += 1
        obs = child(rel, "observation")
        if _obs(obs, C.OBS_ADDITIONAL_INFO):
            f.text(f"drug_additional_info[{k}]", child(obs, "value"))
    indication = 0
    for rel in children(sa, "inboundRelationship"):
        obs = child(rel, "observation")
        if _obs(obs, C.OBS_INDICATION):
            f.text(f"drug_indication[{k}][{indication}]", find(obs, "value/originalText"))
            indication += 1
