"""Focus rings and form-control borders reach 3:1 against every surface, in both themes (WCAG 1.4.11).

Read from the style sheet itself, so a colour change that breaks the ratio fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).resolve().parents[2] / "static" / "knowledgeweb" / "site.css").read_text()
SURFACES = ("--bg", "--surface", "--surface-2", "--accent-soft", "--warn-soft", "--error-soft")


def _theme(block: str) -> dict[str, str]:
    return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})\s*;", block))


def _themes() -> dict[str, dict[str, str]]:
    light = _theme(CSS.split("@media (prefers-color-scheme: dark)")[0])
    dark_block = re.search(r"@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{(.*?)\}", CSS, re.S)
    assert dark_block
    return {"light": light, "dark": {**light, **_theme(dark_block.group(1))}}


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_contrast_formula_matches_wcag() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("colour", ["--focus", "--control-border"])
def test_focus_rings_and_control_borders_reach_3_to_1_on_every_surface(theme: str, colour: str) -> None:
    palette = _themes()[theme]
    ratios = {surface: round(contrast(palette[colour], palette[surface]), 2) for surface in SURFACES}

    assert min(ratios.values()) >= 3.0, ratios


def test_focus_rings_and_form_controls_use_those_colours() -> None:
    assert re.search(r":focus-visible\s*\{\s*outline:\s*3px solid var\(--focus\)", CSS)
    controls = re.search(r"\.login-form input,\s*\.login-form textarea,.*?\{(.*?)\}", CSS, re.S)
    assert controls
    assert "border: 1px solid var(--control-border)" in controls.group(1)
