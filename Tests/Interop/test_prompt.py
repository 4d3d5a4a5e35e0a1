"""Words typed at a real terminal (a pty), as a parent or a share holder would type them: one
word at a time, each checked as it is typed, the checksum checked at the end, and nothing left
on the screen or written when they stop."""
import os
import pty
import re
import select
import shutil
import subprocess
import termios
import time

import pytest
from mnemonic import Mnemonic
from shamir_mnemonic.wordlist import WORDLIST as SLIP39_WORDS

from workspace import BIN, FIXTURES

TIMEOUT = 30
BIP39_WORDS = set(Mnemonic("english").wordlist)


class Session:
    """A tool on the child side of a pty, its controlling terminal."""

    def __init__(self, argv, cwd):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execv(str(argv[0]), [str(a) for a in argv])
        self.screen = b""
        self.cursor = 0  # where the next read_until starts looking: after the last match

    def read_until(self, pattern, timeout=TIMEOUT):
        """Reads until `pattern` (bytes regex) appears after the last match; returns what came up to it."""
        deadline = time.monotonic() + timeout
        start = self.cursor
        while not (match := re.search(pattern, self.screen[start:])):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"waited for {pattern!r}; the screen shows {self.screen[start:][-800:]!r}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"the tool ended while waiting for {pattern!r}: {self.screen[start:][-800:]!r}"
                self.screen += chunk
        self.cursor = start + match.end()
        return self.screen[start:self.cursor]

    def type(self, text):
        os.write(self.fd, text.encode())

    def answer(self, prompt, text):
        self.read_until(prompt)
        self.type(text + "\r")

    def finish(self):
        """Reads the rest and waits: the exit status, and the terminal's settings after it."""
        while True:
            ready, _, _ = select.select([self.fd], [], [], TIMEOUT)
            assert ready, "the tool did not end"
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.screen += chunk
        attributes = termios.tcgetattr(self.fd)
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status), attributes

    def outside_the_prompt(self):
        """What the tool wrote to the main screen: everything before it switched to the
        alternate screen and after it left it. The alternate screen has no scrollback and is
        discarded on leaving, so only this can stay on the screen or in its history."""
        assert self.screen.count(b"\x1b[?1049h") == 1 and self.screen.count(b"\x1b[?1049l") == 1, self.screen[-400:]
        before, rest = self.screen.split(b"\x1b[?1049h", 1)
        return before + rest.split(b"\x1b[?1049l", 1)[1]


@pytest.fixture
def folder(tmp_path):
    shutil.copytree(FIXTURES / "keys", tmp_path / "keys")
    for key in (tmp_path / "keys").iterdir():
        key.chmod(0o600)
    return tmp_path


def words_of(path):
    return re.findall(r"[a-z]+", path.read_text())


def test_a_key_typed_word_by_word_with_an_unknown_word_a_swap_and_a_step_back(folder):
    subprocess.run([BIN / "recovery-sheet", "words", "--key-file", "keys/parent.nsec", "-o", "w.txt"], cwd=folder, check=True)
    words = words_of(folder / "w.txt")
    assert len(words) == 24
    # The first word whose second and third letters, swapped, make no list word: a typo to correct.
    swap_at = next(i for i, w in enumerate(words) if i > 3 and w[0] + w[2] + w[1] + w[3:] not in BIP39_WORDS)
    session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
    for index, word in enumerate(words):
        prompt = rf"word {index + 1} of 24: ".encode()
        if index == 2:
            session.answer(prompt, "zzzqx")
            session.read_until(rb"not a word of the list; closest: ")
        elif index == swap_at:
            session.answer(prompt, word[0] + word[2] + word[1] + word[3:])
            shown = session.read_until(rb"closest: [a-z, ]+\r")
            assert re.search(rb"closest: " + word.encode() + rb"\b", shown), shown  # a swap is one step: the word comes first
        elif index == 7:
            session.answer(prompt, "abandon")  # wrong, then back
            session.answer(rb"word 9 of 24: ", "-")
        session.answer(prompt, word)
    status, attributes = session.finish()
    assert status == 0, session.screen[-800:]
    assert (folder / "restored.nsec").read_text() == (folder / "keys" / "parent.nsec").read_text()
    assert (folder / "restored.nsec").stat().st_mode & 0o777 == 0o600
    shown = session.outside_the_prompt()
    assert not any(re.search(rb"\b" + word.encode() + rb"\b", shown) for word in words), shown
    assert attributes[3] & termios.ECHO and attributes[3] & termios.ICANON


def test_a_share_with_one_wrong_but_valid_word_is_corrected_at_the_prompt(folder):
    subprocess.run([BIN / "recovery-sheet", "split", "--key-file", "keys/parent.nsec", "--threshold", "2", "--shares", "2", "--text",
                    "--dpi", "72", "--iteration-exponent", "0", "--date", "2026-01-01", "-o", "shares"], cwd=folder, check=True,
                   capture_output=True)
    words = words_of(folder / "shares" / "share-1-of-2.txt")
    assert len(words) == 33
    wrong = next(w for w in SLIP39_WORDS if w != words[9])  # a list word, so only the checksum can find it
    session = Session([BIN / "recovery-sheet", "combine", "-", "shares/share-2-of-2.txt", "-o", "restored.nsec"], folder)
    for index, word in enumerate(words):
        session.answer(rf"word {index + 1} of 33: ".encode(), wrong if index == 9 else word)
    session.answer(rf"the check points to word 10: did you mean '{words[9]}'\? \[y/n\] ".encode(), "y")
    status, attributes = session.finish()
    assert status == 0, session.screen[-800:]
    assert (folder / "restored.nsec").read_text() == (folder / "keys" / "parent.nsec").read_text()
    # The share's words are random, and some are English words the tool's own messages use
    # ("wrote", "type", "recover"): what must not reach the main screen is a typed answer (a
    # word alone on its line, as the echo leaves it) or any two of the words in their order.
    shown = session.outside_the_prompt()
    assert not any(re.search(rb"(^|\s)" + word.encode() + rb"\r?\n", shown) for word in words), shown
    assert not any(f"{first} {second}".encode() in shown for first, second in zip(words, words[1:])), shown


def test_ctrl_c_restores_the_terminal_and_writes_nothing(folder):
    session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
    session.answer(rb"word 1 of 24: ", "abandon")
    session.answer(rb"word 2 of 24: ", "ability")
    session.read_until(rb"word 3 of 24: ")
    session.type("abo\x03")
    status, attributes = session.finish()
    assert status == 64, session.screen[-800:]
    assert not (folder / "restored.nsec").exists()
    assert b"cancelled; nothing was written" in session.screen
    assert b"ability" not in session.outside_the_prompt() and b"abandon" not in session.outside_the_prompt()
    assert attributes[3] & termios.ECHO and attributes[3] & termios.ICANON and attributes[3] & termios.ISIG


def test_a_word_the_final_check_rejects_is_typed_again_alone(folder):
    """BIP-39's 8-bit checksum cannot point to a word: the person names the one to type again,
    and only that word is asked for before the whole is checked again."""
    subprocess.run([BIN / "recovery-sheet", "words", "--key-file", "keys/parent.nsec", "-o", "w.txt"], cwd=folder, check=True)
    words = words_of(folder / "w.txt")
    wrong = next(w for w in sorted(BIP39_WORDS) if w != words[4])
    session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
    for index, word in enumerate(words):
        session.answer(rf"word {index + 1} of 24: ".encode(), wrong if index == 4 else word)
    shown = session.read_until(rb"number of the word to type again \(1 to 24\), or Enter to stop: ")
    assert b"checksum does not match" in shown, shown
    session.type("5\r")
    session.answer(rb"word 5 of 24: ", words[4])
    status, _ = session.finish()
    assert status == 0, session.screen[-800:]
    assert b"word 6 of 24: " not in session.screen.split(b"word 5 of 24: ")[-1]  # nothing after word 5 was asked again
    assert (folder / "restored.nsec").read_text() == (folder / "keys" / "parent.nsec").read_text()
