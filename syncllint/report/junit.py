"""JUnit XML in ruff's shape: a test suite per file, a failing test case per finding."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from itertools import groupby
from typing import TextIO

from syncllint.diagnostics import Diagnostic

_PACKAGE = "org.syncllint"
# Characters XML 1.0 cannot carry at all, even escaped (a parser message may quote them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def render_junit(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    count = str(len(diagnostics))
    root = ET.Element("testsuites", name="syncllint", tests=count, failures=count, errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="syncllint", tests="1", disabled="0", errors="0", failures="0")
        ET.SubElement(suite, "testcase", name="No errors found")
    for filename, group in groupby(diagnostics, key=lambda d: d.filename):
        findings = list(group)
        n = str(len(findings))
        suite = ET.SubElement(
            root, "testsuite", name=_xml_text(filename), tests=n, disabled="0", errors="0", failures=n, package=_PACKAGE
        )
        for d in findings:
            case = ET.SubElement(
                suite, "testcase", name=f"{_PACKAGE}.{d.code}", classname=_xml_text(filename),
                line=str(d.start.row), column=str(d.start.column),
            )
            cell = f"cell {d.cell}, " if d.cell is not None else ""
            failure = ET.SubElement(case, "failure", message=_xml_text(d.message))
            failure.text = _xml_text(f"{cell}line {d.start.row}, col {d.start.column}, {d.message}")
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
