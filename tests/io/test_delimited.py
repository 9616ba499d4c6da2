from pathlib import Path

import pyarrow as pa
import pytest

from graphflow.errors import DataError
from graphflow.io.delimited import delimiter_char, read_delimited


def _write(tmp_path: Path, text: str, name: str = "edges.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_comments_blank_lines_and_sniffed_delimiter_keep_line_numbers(tmp_path):
    path = _write(tmp_path, '# made by hand, "quoted"\n\na,b,1.5\nc,d,2\n# middle\n\ne,f,3\n')
    read = read_delimited(path, delimiter=None, header=False, comment="#",
                          select={"src": 0, "dst": 1, "w": 2}, types={"w": pa.float32()},
                          ids=("src", "dst"))
    assert read.delimiter == ","
    assert read.table.to_pydict() == {"src": ["a", "c", "e"], "dst": ["b", "d", "f"],
                                      "w": [1.5, 2.0, 3.0]}
    assert read.table.schema.field("w").type == pa.float32()
    assert [read.line(i) for i in range(3)] == [3, 4, 7]


def test_header_names_and_missing_column(tmp_path):
    path = _write(tmp_path, "from\tto\tweight\n1\t2\t0.5\n2\t3\t1\n")
    read = read_delimited(path, delimiter="\t", header=True, select={"s": "from", "d": "to"})
    assert read.table.to_pydict() == {"s": [1, 2], "d": [2, 3]}
    assert read.where(1) == f"{path}:3"
    with pytest.raises(DataError, match=r"no column 'cost' for the w; columns: from, to, weight"):
        read_delimited(path, delimiter="\t", header=True, select={"w": "cost"})
    with pytest.raises(DataError, match=r"no column 5 for the w \(the first line has 3 columns"):
        read_delimited(path, delimiter="\t", header=True, select={"w": 5})


def test_malformed_line_is_reported_with_its_number(tmp_path):
    path = _write(tmp_path, "# c\na b\nc d\n\ne f g\nh i\n")
    with pytest.raises(DataError) as info:
        read_delimited(path, delimiter=" ", header=False, comment="#",
                       select={"s": 0, "d": 1}, what="edge list")
    assert str(info.value) == (f"edge list {path}:5: expected 2 space-separated fields, "
                               f"found 3: 'e f g'")


def test_bad_number_is_reported_with_its_line(tmp_path):
    path = _write(tmp_path, "a\tb\t1\nb\tc\t2.5\nc\td\theavy\n")
    with pytest.raises(DataError, match=rf"edge list {path}:3: w 'heavy' is not a number"):
        read_delimited(path, delimiter="\t", header=False, select={"s": 0, "d": 1, "w": 2},
                       types={"w": pa.float32()}, what="edge list")


def test_ids_that_turn_out_to_be_text_are_read_as_text(tmp_path):
    path = _write(tmp_path, "1,2\n2,3.5\n3,4\n")
    read = read_delimited(path, delimiter=",", header=False, select={"s": 0, "d": 1},
                          ids=("s", "d"))
    assert read.table.column("s").type == pa.int64()
    assert read.table.column("d").to_pylist() == ["2", "3.5", "4"]


def test_missing_empty_and_comment_only_files(tmp_path):
    with pytest.raises(DataError, match=r"edge list not found: .*nope.tsv"):
        read_delimited(tmp_path / "nope.tsv", delimiter=None, header=False, what="edge list")
    with pytest.raises(DataError, match=r"edge list .*empty.tsv is empty"):
        read_delimited(_write(tmp_path, "", "empty.tsv"), delimiter=None, header=False,
                       what="edge list")
    with pytest.raises(DataError, match=r"has no data: only comments or blank lines"):
        read_delimited(_write(tmp_path, "# x\n\n", "c.tsv"), delimiter=None, header=False,
                       comment="#", what="edge list")


def test_delimiter_names():
    assert [delimiter_char(n) for n in ("auto", "tab", "comma", "space", ";")] == \
        [None, "\t", ",", " ", ";"]
    with pytest.raises(ValueError, match=r'delimiter = "pipe": use "auto", "tab", "comma"'):
        delimiter_char("pipe")


def test_windows_line_endings(tmp_path):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b"src,dst,w\r\na,b,1\r\n# note\r\nb,c,x\r\n")
    with pytest.raises(DataError, match=r"crlf.csv:4: w 'x' is not a number"):
        read_delimited(path, delimiter=None, header=True, comment="#",
                       select={"s": "src", "d": "dst", "w": "w"}, types={"w": pa.float32()})
    path.write_bytes(b"src,dst,w\r\na,b,1\r\nb,c,2\r\n")
    read = read_delimited(path, delimiter=None, header=True, select={"w": "w"})
    assert read.table.column("w").to_pylist() == [1, 2]


def test_untyped_column_that_turns_to_text_is_read_as_text(tmp_path, monkeypatch):
    import graphflow.io.delimited as delimited

    monkeypatch.setattr(delimited, "BLOCK_SIZE", 64)  # several blocks: inference on the first
    rows = "".join(f"{i},{i}\n" for i in range(20)) + "20,bob\n"
    path = _write(tmp_path, "id,name\n" + rows, "nodes.csv")
    read = read_delimited(path, delimiter=",", header=True)
    assert read.table.column("name").type == pa.string()
    assert read.table.column("name").to_pylist()[-1] == "bob"
    assert read.table.column("id").type == pa.int64()
