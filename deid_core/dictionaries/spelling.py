"""British spellings of the safe lists' American words ("haemorrhage", "oedema", "hospitalised").

Why: the medical word list (hunspell-en-med) and the common-word lists
(wamerican, WordNet) are American. Safety narratives from the UK, Europe,
Australia or India write "haemoglobin", "hyponatraemia", "oesophagitis",
"diarrhoea", "paediatric", "tumour" and "hospitalised"; with American lists
alone those are unknown words, which the rules mask and only the network can
release. The spelling differences that matter for clinical words are a
handful of regular patterns, so this module derives the British form of each
listed word by rule, written here from the usual spelling correspondences,
rather than adding a spelling-converter package or a second word list for
them. A derived form that is no real word ("systaemic") is harmless: it only
makes that string safe, and no name or place is one.

`british_forms` is pure; the dictionary build adds the forms it returns with
the safe flags of the American word, after every unsafe list, and never
touches a string some list already has (a name stays a name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: recorded in the artifact's provenance; raise it when the rules change
RULES_VERSION = "1"
#: (American pattern, British replacement), applied one at a time and in combination
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        # anaemia, hyponatraemia, ischaemic, leukaemia, glycaemic
        (r"(?<=[^aeiou])em(?=i[ac])", "aem"),
        # haemorrhage, haematoma, haemoglobin, haemolysis, haemodialysis, haemoptysis
        (r"(?<![a-z])hem(?=at|o|orr)", "haem"),
        (r"(?<=[a-z])hem(?=at|og|ol|od|opt|orr|ost|ody)", "haem"),
        # oedema, oesophagus, oestrogen, oestradiol
        (r"(?<![a-z])(?=edem|esophag|estr)", "o"),
        # paediatric, orthopaedic, encyclopaedia
        (r"ped(?=ia|ic)", "paed"),
        # diarrhoea, amenorrhoea, dyspnoea, apnoea
        (r"(rrh|pn)ea", r"\1oea"),
        # foetal, foetus
        (r"(?<![a-z])fet(?=al|us|uses)(?![a-z]{3})", "foet"),
        # hospitalised, immunisation, anaesthetised; -ize/-ization
        (r"iz(e|ed|es|ing|ation|ations|er|ers)$", r"is\1"),
        # paralysed, analysed
        (r"yz(e|ed|es|ing)$", r"ys\1"),
        # anaesthesia, paraesthesia, aetiology, gynaecology, caecum, coeliac
        (r"(?<=an|ar)esthe", "aesthe"),
        (r"(?<![a-z])etiolog", "aetiolog"),
        (r"gynec", "gynaec"),
        (r"(?<![a-z])cec(?=um|al)", "caec"),
        (r"(?<![a-z])celiac", "coeliac"),
        # leucocyte, leucopenia
        (r"leuk(?=ocyt|open)", "leuc"),
        # tumour, colour, behaviour, labour, odour, humour, vapour
        (r"(?<![a-z])(tum|col|behavi|lab|od|hum|vap|fav)or(s|ed|ing|al)?$", r"\1our\2"),
        # centre, litre, millilitre, fibre, metre (units and places of care)
        (r"(cent|lit|fib|met)er(s)?$", r"\1re\2"),
        # sulphate, sulphur, sulphonamide
        (r"sulf", "sulph"),
    )
)


def british_forms(word: str) -> Iterator[str]:
    """Each British spelling of `word` (lower case) the rules derive; nothing when none applies.

    Rules combine ("hemorrhagic" also gains nothing more, "pediatrician" gains
    "paediatrician"; "anesthetized" gains both "anaesthetized" and
    "anaesthetised"): every non-empty subset of the applicable rules is applied.
    """
    applicable = [(rx, rep) for rx, rep in _RULES if rx.search(word)]
    seen = {word}
    for mask in range(1, 1 << len(applicable)):
        form = word
        for k, (rx, rep) in enumerate(applicable):
            if mask >> k & 1:
                form = rx.sub(rep, form)
        if form not in seen:
            seen.add(form)
            yield form
