"""``syncllint rule``: render catalogue pages and the rule table with rich."""

from __future__ import annotations

import json

from syncllint.catalogue import load_catalogue, page_url
from syncllint.checks import FAMILIES, all_rules, rule_by_code


def print_rule_table(as_json: bool = False) -> None:
    rows = [
        {
            "code": r.code,
            "name": r.name,
            "family": FAMILIES.get(r.code[:5], r.family),
            "default": r.enabled_by_default,
            "fix": r.fix_applicability.value if r.fix_applicability else None,
            "summary": r.summary,
            "url": page_url(r.code),
        }
        for r in all_rules()
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="syncllint rules")
    for column in ("code", "name", "family", "default", "fix", "summary"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            str(row["code"]), str(row["name"]), str(row["family"]), "on" if row["default"] else "off",
            str(row["fix"] or "-"), str(row["summary"]),
        )
    Console().print(table)


def print_rule(code: str, as_json: bool = False) -> bool:
    rule = rule_by_code(code)
    page = load_catalogue().get(code.upper())
    if rule is None or page is None:
        return False
    if as_json:
        print(json.dumps({"code": rule.code, "name": rule.name, "summary": rule.summary, "page": page.text}, indent=2))
        return True
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(page.text))
    return True
