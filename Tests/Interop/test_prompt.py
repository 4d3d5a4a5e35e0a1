"""Words typed at a real terminal (a pty), as a parent or a share holder would type them: one
word at a time, each checked as it is typed, the checksum checked at the end, and nothing left
on the screen or written when they stop."""
import os
import pty
import re
import select
import shutil
import signal
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
    """The words of a words file: a share's file has the sheet's check code on the line under them."""
    return re.findall(r"[a-z]+", path.read_text().splitlines()[0])


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


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_at_the_prompt_restores_the_terminal_and_clears_the_words(folder, signal_number):
    """Sent by another process (at the prompt Ctrl-C is a byte): the tool ends by the signal,
    the terminal is back in its mode, the typed words left with the alternate screen, and
    nothing is written."""
    subprocess.run([BIN / "recovery-sheet", "words", "--key-file", "keys/parent.nsec", "-o", "w.txt"], cwd=folder, check=True)
    words = words_of(folder / "w.txt")
    session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
    session.answer(rb"word 1 of 24: ", words[0])
    session.answer(rb"word 2 of 24: ", " ".join(words[1:3]))
    session.read_until(rb"word 4 of 24: ")
    session.type(words[3][:3])
    session.read_until(words[3][:3].encode())
    os.kill(session.pid, signal_number)
    status, attributes = session.finish()
    assert status == -signal_number, session.screen[-400:]
    assert not (folder / "restored.nsec").exists()
    shown = session.outside_the_prompt()
    assert not any(re.search(rb"\b" + word.encode() + rb"\b", shown) for word in words[:3]), shown
    assert session.screen.endswith(b"\x1b[H\x1b[2J\x1b[?1049l"), session.screen[-80:]
    assert attributes[3] & termios.ECHO and attributes[3] & termios.ICANON and attributes[3] & termios.ISIG


def test_a_signal_at_the_passphrase_prompt_turns_echo_back_on(folder):
    subprocess.run([BIN / "recovery-sheet", "generate", "--key-file", "keys/parent.nsec", "--dpi", "100", "--log-n", "8",
                    "--passphrase-file", "-", "-o", "sheet.png"], cwd=folder, check=True, input=b"tall green ladder 42\n",
                   capture_output=True)
    session = Session([BIN / "recovery-sheet", "scan", "sheet.png", "--passphrase-file", "-", "-o", "restored.nsec"], folder)
    session.read_until(rb"passphrase: ")
    session.type("tall gr")
    os.kill(session.pid, signal.SIGTERM)
    status, attributes = session.finish()
    assert status == -signal.SIGTERM and not (folder / "restored.nsec").exists()
    assert b"tall" not in session.screen
    assert attributes[3] & termios.ECHO and attributes[3] & termios.ISIG


def test_a_pasted_line_rows_of_the_grid_and_the_key_in_groups(folder):
    subprocess.run([BIN / "recovery-sheet", "words", "--key-file", "keys/parent.nsec", "-o", "w.txt"], cwd=folder, check=True)
    words = words_of(folder / "w.txt")
    expected = (folder / "keys" / "parent.nsec").read_text()
    nsec = expected.strip()

    def restore(answers):
        session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
        for prompt, text in answers:
            session.answer(prompt, text)
        status, _ = session.finish()
        assert status == 0, session.screen[-800:]
        assert (folder / "restored.nsec").read_text() == expected
        (folder / "restored.nsec").unlink()
        return session

    restore([(rb"word 1 of 24: ", ", ".join(words))])
    # Pasted with the sheet's numbering; a line longer than the places left is typed again.
    session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
    session.answer(rb"word 1 of 24: ", " ".join(words[:2]))
    session.answer(rb"word 3 of 24: ", " ".join(words[2:] + ["abandon"]))
    session.read_until(rb"that is 23 words, and 22 places are left \(word 3 to 24\): type it again")
    session.answer(rb"word 3 of 24: ", " ".join(f"{i + 3}. {w}" for i, w in enumerate(words[2:])))
    status, _ = session.finish()
    assert status == 0, session.screen[-800:]
    assert (folder / "restored.nsec").read_text() == expected
    (folder / "restored.nsec").unlink()
    # Row by row across the printed grid (three columns, numbered down each column).
    rows = [" ".join(words[row + 8 * column] for column in range(3)) for row in range(8)]
    session = restore([(rf"word {3 * row + 1} of 24: ".encode(), text) for row, text in enumerate(rows)])
    assert b"typed row by row across the printed grid" in session.screen
    # The key as the sheet prints it, in groups of four, first with an o for a 0.
    grouped = " ".join(nsec[i:i + 4] for i in range(0, len(nsec), 4))
    place = next(i for i in range(5, len(nsec)) if nsec[i] == "0")
    typo = nsec[:place] + "o" + nsec[place + 1:]
    session = Session([BIN / "recovery-sheet", "words", "--decode", "-o", "restored.nsec"], folder)
    session.answer(rb"word 1 of 24: ", " ".join(typo[i:i + 4] for i in range(0, len(typo), 4)).upper())
    session.read_until(rf"character {place % 4 + 1} of group {place // 4 + 1} is 'o', which no key uses: it is probably the digit 0".encode())
    session.answer(rb"word 1 of 24: ", grouped)
    status, _ = session.finish()
    assert status == 0, session.screen[-800:]
    assert (folder / "restored.nsec").read_text() == expected
    assert not any(group.encode() in session.outside_the_prompt().lower() for group in grouped.split()[2:]), session.outside_the_prompt()


def test_a_wrong_word_that_fits_is_refused_against_the_npub(folder):
    subprocess.run([BIN / "recovery-sheet", "words", "--key-file", "keys/parent.nsec", "-o", "w.txt"], cwd=folder, check=True)
    words = words_of(folder / "w.txt")
    npub = (folder / "keys" / "parent.npub").read_text().strip()
    mnemonic = Mnemonic("english")
    wrong = next(words[:5] + [w] + words[6:] for w in mnemonic.wordlist if w != words[5] and mnemonic.check(" ".join(words[:5] + [w] + words[6:])))
    session = Session([BIN / "recovery-sheet", "words", "--decode", "--npub", npub, "-o", "restored.nsec"], folder)
    session.answer(rb"word 1 of 24: ", " ".join(wrong))
    status, _ = session.finish()
    assert status == 3, session.screen[-800:]
    assert b"is not the public key given; nothing was written" in session.screen
    assert not (folder / "restored.nsec").exists()


def test_combine_reads_every_picture_before_a_share_is_typed(folder):
    from PIL import Image
    Image.new("L", (200, 200), 255).save(folder / "blank.png")
    session = Session([BIN / "recovery-sheet", "combine", "-", "blank.png", "--passphrase-file", "-", "-o", "restored.nsec"], folder)
    status, _ = session.finish()
    assert status == 2, session.screen[-800:]
    assert b"no share code found in the picture 'blank.png'" in session.screen
    assert b"word 1 of 33" not in session.screen and b"\x1b[?1049h" not in session.screen and b"passphrase" not in session.screen


def test_a_typed_share_and_a_picture_without_the_passphrase_are_refused(folder):
    (folder / "pass.txt").write_text("grandma's rose garden 1958\n")
    subprocess.run([BIN / "recovery-sheet", "split", "--key-file", "keys/parent.nsec", "--threshold", "2", "--shares", "2", "--text",
                    "--dpi", "150", "--iteration-exponent", "0", "--passphrase-file", "pass.txt", "-o", "shares"], cwd=folder, check=True,
                   capture_output=True)
    words = words_of(folder / "shares" / "share-1-of-2.txt")
    for passphrase in ([], ["--passphrase-file", "pass.txt"]):
        session = Session([BIN / "recovery-sheet", "combine", "-", "shares/share-2-of-2.png", *passphrase, "-o", "restored.nsec"], folder)
        session.answer(rb"word 1 of 33: ", " ".join(words))
        status, _ = session.finish()
        if passphrase:
            assert status == 0, session.screen[-800:]
            assert (folder / "restored.nsec").read_text() == (folder / "keys" / "parent.nsec").read_text()
        else:
            assert status == 3, session.screen[-800:]
            assert b"the shares were split with a passphrase, and none was given" in session.screen
            assert not (folder / "restored.nsec").exists()
