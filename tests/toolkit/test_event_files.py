"""Event files sort in creation order (issue 14 item 4): TensorBoard reads a folder's files by name."""

from tftk.summary.writer import FileWriter


def test_event_file_names_sort_in_creation_order(tmp_path):
    names = []
    for _ in range(12):  # past the counter's 9 -> 10, within one second
        writer = FileWriter(str(tmp_path))
        (new,) = {p.name for p in tmp_path.iterdir()} - set(names)
        names.append(new)
        writer.close()
    assert sorted(names) == names
    assert all(name.startswith("events.out.tfevents.") for name in names)
