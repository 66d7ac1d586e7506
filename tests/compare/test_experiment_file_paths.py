"""An experiment file (the lab's own or a promptfoo config) reads the files it names only from its own directory:
`../x`, an absolute path, or a link pointing outside are refused, naming the path."""

import pytest

from compare.experiments.files import DirectoryFiles


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "secret.txt").write_text("top secret")
    inside = tmp_path / "project"
    (inside / "prompts").mkdir(parents=True)
    (inside / "prompts" / "a.txt").write_text("Hello {{name}}")
    (inside / "link.txt").symlink_to(tmp_path / "secret.txt")
    return inside


def test_files_beside_the_config_are_read(folder):
    assert DirectoryFiles(folder).read("prompts/a.txt") == "Hello {{name}}"


@pytest.mark.parametrize("path", ["../secret.txt", "prompts/../../secret.txt", "link.txt"])
def test_a_path_leaving_the_config_s_directory_is_refused(folder, path):
    with pytest.raises(ValueError, match="outside the config file's directory"):
        DirectoryFiles(folder).read(path)


def test_an_absolute_path_is_refused(folder):
    with pytest.raises(ValueError, match="outside the config file's directory"):
        DirectoryFiles(folder).read(str(folder.parent / "secret.txt"))
