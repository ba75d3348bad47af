"""Laying rows out for a terminal of any width: a table where it fits, else one block per row.

Keys (IDs) are never cut. In a table, the one flexible column wraps; a paragraph of it longer
than :data:`TABLE_PARAGRAPH_LINES` is cut, and the listing then says which command shows it
whole. In the stacked layout nothing is cut: every line wraps at the width.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

import attrs

from wisp._text import cell_width, visible, wrap

GAP = "  "
# The flexible column's narrowest width in a table; narrower, rows are stacked instead.
FLEX_MIN_CELLS = 24
# In a table, a flexible cell's paragraph wraps to at most this many lines, then is cut.
TABLE_PARAGRAPH_LINES = 3
# A stacked value narrower than this goes under its label rather than beside it.
STACKED_VALUE_MIN_CELLS = 16
CUT = " …"


class Role(Enum):
    KEY = "key"  # the first column: never cut; a stacked block's first word
    SHORT = "short"  # stacked: on the block's first line, after the key
    FLEX = "flex"  # the column that takes the rest of the width; its cell is paragraphs
    FIELD = "field"  # stacked: a labelled line of its own


@attrs.frozen(kw_only=True)
class Column:
    header: str
    role: Role = Role.SHORT
    label: str | None = None  # a FIELD's label in the stacked layout (default: the header)


# A flexible cell: (label, text) paragraphs; in a table the first one's label is not shown.
Paragraphs = Sequence[tuple[str, str]]
Cell = str | Paragraphs


@attrs.frozen(kw_only=True)
class Line:
    text: str
    header: bool = False


def layout(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int,
    *,
    pointer: Callable[[str], str],
    limit: int | None = TABLE_PARAGRAPH_LINES,
) -> list[Line]:
    """*rows* as a table if it fits *width*, else stacked. In a table, a flexible paragraph
    longer than *limit* lines (None: no limit) is cut, and *pointer(key)* is said under the
    table for each row cut."""
    table = _table(columns, rows, width, pointer, limit)
    return table if table is not None else _stacked(columns, rows, width)


def _text(cell: Cell) -> str:
    assert isinstance(cell, str)
    return visible(cell)


def _table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int,
    pointer: Callable[[str], str],
    limit: int | None,
) -> list[Line] | None:
    widths: list[int] = []
    for index, column in enumerate(columns):
        if column.role is Role.FLEX:
            widths.append(0)
            continue
        cells = [cell_width(_text(row[index])) for row in rows]
        widths.append(max([cell_width(column.header), *cells]))
    gaps = len(GAP) * (len(columns) - 1)
    flex = [i for i, c in enumerate(columns) if c.role is Role.FLEX]
    room = width - sum(widths) - gaps
    if flex:
        natural = max(
            [cell_width(columns[flex[0]].header)]
            + [
                cell_width(visible(text if n == 0 else f"{label}: {text}"))
                for row in rows
                for n, (label, text) in enumerate(_paragraphs(row[flex[0]]))
            ]
        )
        # A table while what is asked fits whole, or has room enough to wrap readably.
        if room < min(FLEX_MIN_CELLS, natural):
            return None
        widths[flex[0]] = min(room, natural)
    elif room < 0:
        return None
    lines = [Line(text=_join([c.header for c in columns], widths), header=True)]
    cut_keys: list[str] = []
    for row in rows:
        blocks: list[list[str]] = []
        for index, column in enumerate(columns):
            if column.role is Role.FLEX:
                block, cut = _flex_cell(row[index], widths[index], limit)
                if cut:
                    cut_keys.append(_text(row[0]))
                blocks.append(block)
            else:
                blocks.append([_text(row[index])])
        for n in range(max(len(b) for b in blocks)):
            lines.append(Line(text=_join([b[n] if n < len(b) else "" for b in blocks], widths)))
    for key in cut_keys:
        lines.extend(Line(text=t) for t in wrap(pointer(key), width))
    return lines


def _paragraphs(cell: Cell) -> Paragraphs:
    assert not isinstance(cell, str)
    return cell


def _flex_cell(cell: Cell, width: int, limit: int | None) -> tuple[list[str], bool]:
    lines: list[str] = []
    cut = False
    indent = ""  # a blank label continues the paragraph above, under its text
    for n, (label, text) in enumerate(_paragraphs(cell)):
        if n and label:
            indent = " " * (cell_width(label) + 2)
        shown = text if n == 0 else (f"{label}: {text}" if label else indent + text)
        wrapped = wrap(shown, width)
        if limit is not None and len(wrapped) > limit:
            wrapped = wrapped[:limit]
            last = wrapped[-1]
            while last and cell_width(last + CUT) > width:
                last = last[:-1]
            wrapped[-1] = last + CUT
            cut = True
        lines.extend(wrapped)
    return lines, cut


def _join(cells: Sequence[str], widths: Sequence[int]) -> str:
    padded = [c + " " * max(0, w - cell_width(c)) for c, w in zip(cells, widths, strict=True)]
    return GAP.join(padded).rstrip()


def _stacked(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int) -> list[Line]:
    lines: list[Line] = []
    for number, row in enumerate(rows):
        if number:
            lines.append(Line(text=""))
        first = [_text(row[0])]
        fields: list[tuple[str, str]] = []
        for index, column in enumerate(columns[1:], 1):
            if column.role is Role.SHORT:
                first.append(_text(row[index]))
            elif column.role is Role.FLEX:
                fields.extend(_paragraphs(row[index]))
            else:
                fields.append((column.label or column.header.lower(), _text(row[index])))
        parts = _packed(first, width)
        lines.append(Line(text=parts[0], header=True))
        lines.extend(Line(text=GAP + t, header=True) for t in parts[1:])
        lines.extend(Line(text=t) for t in labelled(fields, width, indent=2))
    return lines


def _packed(cells: Sequence[str], width: int) -> list[str]:
    """A block's first line: its key, then whole cells while they fit, the rest on further
    lines (indented). The key is never folded: on a terminal narrower than it, it has a line
    of its own, which the terminal wraps."""
    parts = [cells[0]]
    room = width - len(GAP)
    for cell in cells[1:]:
        joined = parts[-1] + GAP + cell
        if cell_width(joined) <= (width if len(parts) == 1 else room):
            parts[-1] = joined
        elif cell_width(cell) <= room:
            parts.append(cell)
        else:
            parts.extend(wrap(cell, room))
    return parts


def labelled(fields: Sequence[tuple[str, str]], width: int, *, indent: int = 0) -> list[str]:
    """(label, value) pairs as aligned lines: each value wrapped whole beside its label (a
    blank label continues the one above), or under it when the width leaves too little."""
    if not fields:
        return []
    label_width = max(cell_width(label) for label, _ in fields)
    value_width = width - indent - label_width - 1
    lines: list[str] = []
    pad = " " * indent
    for label, value in fields:
        if value_width >= STACKED_VALUE_MIN_CELLS:
            for n, part in enumerate(wrap(value, value_width)):
                shown = label if n == 0 else ""
                lines.append(f"{pad}{shown}{' ' * (label_width - cell_width(shown))} {part}")
        else:
            if label:
                lines.append(f"{pad}{label}")
            lines.extend(f"{pad}  {part}" for part in wrap(value, max(width - indent - 2, 1)))
    return [line.rstrip() for line in lines]
