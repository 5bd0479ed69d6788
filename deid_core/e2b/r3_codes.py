"""Codes and OIDs of the ICH E2B(R3) message that locate the data elements.

R3 is an HL7 v3 message: most data elements are not told apart by element
name but by the ``code`` of the act that carries them (an ``observation``
with code 29 is a reaction, one with code 10 is a comment) or by the
``root`` OID of an ``id``. These values come from the ICH E2B(R3)
implementation guide's code lists (OID arc 2.16.840.1.113883.3.989.2.1) and
are shared by the extractor (:mod:`.r3`) and the sample writer
(:mod:`.synthetic_r3`), so that the two cannot drift apart.
"""

from __future__ import annotations

HL7_NS = "urn:hl7-org:v3"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"

BATCH_ROOT = "MCCI_IN200100UV01"
MESSAGE = "PORR_IN049016UV"

# --- code systems -------------------------------------------------------------------
OBSERVATION_CS = "2.16.840.1.113883.3.989.2.1.1.19"
"""ICH observation codes (age, reaction, comment, ...)."""
ORGANIZER_CS = "2.16.840.1.113883.3.989.2.1.1.20"
"""ICH organizer (category) codes."""
AUTHOR_CS = "2.16.840.1.113883.3.989.2.1.1.21"
"""Who wrote a comment: sender or primary-source reporter."""
REPORT_RELATION_CS = "2.16.840.1.113883.3.989.2.1.1.22"
"""Kinds of related investigation (initial report, source report)."""
DOCUMENT_CS = "2.16.840.1.113883.3.989.2.1.1.27"
MEDDRA_CS = "2.16.840.1.113883.6.163"

# --- id roots -------------------------------------------------------------------------
ROOT_REPORT_ID = "2.16.840.1.113883.3.989.2.1.3.1"
"""C.1.1 sender's (case) safety report unique identifier (also N.2.r.1 message id)."""
ROOT_CASE_ID = "2.16.840.1.113883.3.989.2.1.3.2"
"""C.1.8.1 worldwide unique case identification number."""
ROOT_RECORD_NUMBERS: dict[str, str] = {
    "2.16.840.1.113883.3.989.2.1.3.7": "gp_record_number",            # D.1.1.1
    "2.16.840.1.113883.3.989.2.1.3.8": "specialist_record_number",    # D.1.1.2
    "2.16.840.1.113883.3.989.2.1.3.9": "hospital_record_number",      # D.1.1.3
    "2.16.840.1.113883.3.989.2.1.3.10": "investigation_number",       # D.1.1.4
}
RECORD_NUMBER_CODES: dict[str, str] = {
    "1": "gp_record_number", "2": "specialist_record_number",
    "3": "hospital_record_number", "4": "investigation_number",
}

# --- observation codes (OBSERVATION_CS) -----------------------------------------------
OBS_ADDITIONAL_INFO = "2"        # G.k.11 additional information on drug (free text)
OBS_AGE = "3"                    # D.2.2 / D.10.2.2 age
OBS_AUTOPSY = "5"                # D.9.3 autopsy done (carries D.9.4.r causes)
OBS_CAUSE_OF_DEATH = "8"         # D.9.4.r autopsy-determined cause of death
OBS_COMMENT = "10"               # H.2, H.4, D.7.1.r.5, F.r.6 comments
OBS_CONCOMITANT = "11"           # D.7.3 concomitant therapies (BL)
OBS_DIAGNOSIS = "15"             # H.3.r sender's diagnosis
OBS_HISTORY_TEXT = "18"          # D.7.2 / D.10.7.2 medical history text
OBS_INDICATION = "19"            # G.k.7.r indication
OBS_LMP = "22"                   # D.6 / D.10.3 last menstrual period date
OBS_REACTION = "29"              # E.i reaction / event
OBS_REACTION_TRANSLATION = "30"  # E.i.1.2 reaction as reported, for translation
OBS_REPORTED_DEATH_CAUSE = "32"  # D.9.2.r reported cause of death
OBS_CASE_SUMMARY = "36"          # H.5.r case summary and reporter's comments

# --- organizer codes (ORGANIZER_CS) ---------------------------------------------------
ORG_MEDICAL_HISTORY = "1"        # D.7 / D.10.7
ORG_DRUG_HISTORY = "2"           # D.8 / D.10.8
ORG_TESTS = "3"                  # F.r
ORG_DRUGS = "4"                  # G.k

# --- comment authors (AUTHOR_CS) ------------------------------------------------------
AUTHOR_SENDER = "1"
AUTHOR_REPORTER = "3"

# --- related investigations (REPORT_RELATION_CS) ----------------------------------------
RELATION_INITIAL_REPORT = "1"    # C.1.8.2 first sender
RELATION_SOURCE_REPORT = "2"     # C.2.r primary source

# --- documents (DOCUMENT_CS) ------------------------------------------------------------
DOC_HELD_BY_SENDER = "1"         # C.1.6.1.r
DOC_LITERATURE = "2"             # C.4.r
