"""Narrative templates, one module per style; importing this registers them all.

To add a style: write a module whose functions use
:func:`~deid_core.synthetic.templates.registry.template`, then import it
below. The generator schedules every registered template.
"""

from deid_core.synthetic.templates import (  # noqa: F401 - imported for registration
    consumer,
    follow_up,
    literature,
    nursing,
    regulator,
    telegraphic,
    translated,
)
from deid_core.synthetic.templates.registry import STYLES, TEMPLATES, Template, template

__all__ = ["STYLES", "TEMPLATES", "Template", "template"]
