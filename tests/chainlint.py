#!/usr/bin/env python3
"""chainlint.py: finds test bodies whose commands are not joined by &&, as git's chainlint does.

A test body is one && chain: then its exit status is that of the first command that failed. A command
on a line of its own (a newline or ';' where '&&' belongs) breaks the chain, and a failure before the
break goes unseen. Inside if/case arms, { } and ( ), the same rule holds; a for/while body must end its
chain with '|| return 1' or '|| exit 1', or a failure in any round but the last is lost.

    chainlint.py FILE...   lint every test_expect_* body of each test script; prints one line per
                           broken body, 'FILE:LINE: broken &&-chain in "NAME": ...', exits 1 if any
    chainlint.py -         lint the body read from standard input (the harness does this before it runs
                           a body); prints the problem, exits 1 if the chain is broken

The lexer knows what the test bodies use: quotes, $(...), ${...}, $((...)), backquotes, comments and
here-documents. Command substitutions are not linted inside.
"""
import sys

OPS = ["&&", "||", ";;", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "|", ";", "&", "(", ")", "<", ">"]


class Tok:
    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line   # kind: word | op | nl | eof

    def __repr__(self):
        return "%s:%r@%d" % (self.kind, self.text, self.line)


class LintError(Exception):
    def __init__(self, line, msg):
        super().__init__(msg)
        self.line, self.msg = line, msg


class Lexer:
    def __init__(self, text):
        self.s, self.i, self.line = text, 0, 1
        self.heredocs = []   # (delimiter, strip tabs) waiting for the next newline

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def adv(self):
        c = self.s[self.i]
        self.i += 1
        if c == "\n":
            self.line += 1
        return c

    def skip_until_close(self, close):
        """After an opening $( ( { or `: skip to the matching close, through quotes and nesting."""
        depth = 1
        while self.i < len(self.s):
            c = self.peek()
            if c == "\\":
                self.adv()
                if self.i < len(self.s):
                    self.adv()
            elif c == "'" and close != "`":
                self.skip_single()
            elif c == '"' and close != "`":
                self.skip_double()
            elif c == "$" and self.peek(1) in "({":
                self.adv()
                opener = self.adv()
                self.skip_until_close(")" if opener == "(" else "}")
            elif c == "`" and close != "`":
                self.adv()
                self.skip_until_close("`")
            elif close == ")" and c == "(":
                self.adv()
                depth += 1
            elif c == close:
                self.adv()
                depth -= 1
                if depth == 0:
                    return
            else:
                self.adv()
        raise LintError(self.line, "unterminated %s" % ("$(" if close == ")" else close))

    def skip_single(self):
        start = self.line
        self.adv()
        while self.i < len(self.s) and self.peek() != "'":
            self.adv()
        if self.i >= len(self.s):
            raise LintError(start, "unterminated single quote")
        self.adv()

    def skip_double(self):
        start = self.line
        self.adv()
        while self.i < len(self.s):
            c = self.peek()
            if c == "\\":
                self.adv()
                if self.i < len(self.s):
                    self.adv()
            elif c == '"':
                self.adv()
                return
            elif c == "$" and self.peek(1) in "({":
                self.adv()
                opener = self.adv()
                self.skip_until_close(")" if opener == "(" else "}")
            elif c == "`":
                self.adv()
                self.skip_until_close("`")
            else:
                self.adv()
        raise LintError(start, "unterminated double quote")

    def read_heredocs(self):
        """At the start of a line after '<<': skip each pending here-document's lines."""
        for delim, strip in self.heredocs:
            while True:
                if self.i >= len(self.s):
                    raise LintError(self.line, "here-document '%s' never ends" % delim)
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                text = self.s[self.i:end]
                self.line += 1
                self.i = min(end + 1, len(self.s))
                if (text.lstrip("\t") if strip else text) == delim:
                    break
        self.heredocs = []

    def tokens(self):
        out = []
        pending_delim = None   # the '<<' or '<<-' just seen: its next word is a delimiter
        while True:
            c = self.peek()
            if c == "":
                out.append(Tok("eof", "", self.line))
                return out
            if c in " \t":
                self.adv()
                continue
            if c == "\\" and self.peek(1) == "\n":
                self.adv()
                self.adv()
                continue
            if c == "#":
                while self.peek() not in ("", "\n"):
                    self.adv()
                continue
            if c == "\n":
                out.append(Tok("nl", "\n", self.line))
                self.adv()
                if self.heredocs:
                    self.read_heredocs()
                continue
            op = next((o for o in OPS if self.s.startswith(o, self.i)), None)
            if op:
                out.append(Tok("op", op, self.line))
                for _ in op:
                    self.adv()
                if op in ("<<", "<<-"):
                    pending_delim = op
                continue
            start, line = self.i, self.line
            while True:
                c = self.peek()
                if c == "" or c in " \t\n" or any(self.s.startswith(o, self.i) for o in OPS):
                    break
                if c == "\\":
                    self.adv()
                    if self.i < len(self.s):
                        self.adv()
                elif c == "'":
                    self.skip_single()
                elif c == '"':
                    self.skip_double()
                elif c == "$" and self.peek(1) in "({":
                    self.adv()
                    opener = self.adv()
                    self.skip_until_close(")" if opener == "(" else "}")
                elif c == "`":
                    self.adv()
                    self.skip_until_close("`")
                else:
                    self.adv()
            word = self.s[start:self.i]
            out.append(Tok("word", word, line))
            if pending_delim:
                delim = word.replace("\\", "").replace("'", "").replace('"', "")
                self.heredocs.append((delim, pending_delim == "<<-"))
                pending_delim = None


RESERVED_END = {"then", "do", "done", "fi", "else", "elif", "esac", "}", ")", ";;"}


class Parser:
    """Parses just enough of the shell grammar to see every list's separators."""

    def __init__(self, toks):
        self.t, self.k = toks, 0

    def cur(self):
        return self.t[self.k]

    def at_word(self, *words):
        c = self.cur()
        return c.kind == "word" and c.text in words

    def eat(self):
        tok = self.t[self.k]
        self.k += 1
        return tok

    def skip_nl(self):
        while self.cur().kind == "nl":
            self.eat()

    def expect_word(self, word):
        self.skip_nl()
        if not self.at_word(word):
            raise LintError(self.cur().line, "expected '%s', found %r" % (word, self.cur().text))
        self.eat()

    def ends_list(self, enders):
        c = self.cur()
        if c.kind == "eof":
            return True
        if c.kind == "op" and c.text in (")", ";;") and (c.text in enders):
            return True
        return c.kind == "word" and c.text in enders

    def parse_list(self, enders, where):
        """A list of and-or chains up to one of enders. Two chains in one list are a broken chain."""
        chains = []
        self.skip_nl()
        while not self.ends_list(enders):
            first_line = self.cur().line
            last_op = self.parse_andor()
            chains.append((first_line, last_op))
            c = self.cur()
            if c.kind == "op" and c.text in (";", "&"):
                self.eat()
            self.skip_nl()
        if len(chains) > 1:
            raise LintError(chains[1][0], "a command not joined by && %s" % where)
        return chains

    def parse_andor(self):
        """pipeline ((&& | ||) pipeline)*; returns the last connective and the command after it."""
        last = None
        self.parse_pipeline()
        while self.cur().kind == "op" and self.cur().text in ("&&", "||"):
            op = self.eat().text
            self.skip_nl()
            words = self.parse_pipeline()
            last = (op, words)
        return last

    def parse_pipeline(self):
        if self.at_word("!"):
            self.eat()
        words = self.parse_command()
        while self.cur().kind == "op" and self.cur().text == "|":
            self.eat()
            self.skip_nl()
            words = self.parse_command()
        return words

    def parse_command(self):
        c = self.cur()
        if c.kind == "op" and c.text == "(":
            self.eat()
            self.parse_list({")"}, "inside ( )")
            self.close(")")
            self.redirections()
            return ["(...)"]
        if c.kind == "word":
            if c.text == "{":
                self.eat()
                self.parse_list({"}"}, "inside { }")
                self.expect_word("}")
                self.redirections()
                return ["{...}"]
            if c.text == "if":
                return self.parse_if()
            if c.text in ("for", "while", "until"):
                return self.parse_loop()
            if c.text == "case":
                return self.parse_case()
        words = []
        while True:
            c = self.cur()
            if c.kind == "word" and not (words == [] and c.text in RESERVED_END):
                words.append(self.eat().text)
            elif c.kind == "op" and c.text in ("<", ">", ">>", "<&", ">&", "<>", ">|", "<<", "<<-"):
                self.eat()
                if self.cur().kind == "word":
                    self.eat()
            else:
                break
        if not words and c.kind != "eof":
            if c.kind == "op" and c.text in ("&&", "||", "|", ";", "&"):
                raise LintError(c.line, "'%s' with no command before it" % c.text)
        return words

    def close(self, op):
        self.skip_nl()
        c = self.cur()
        if not (c.kind == "op" and c.text == op):
            raise LintError(c.line, "expected '%s', found %r" % (op, c.text))
        self.eat()

    def redirections(self):
        while self.cur().kind == "op" and self.cur().text in ("<", ">", ">>", "<&", ">&", "<>", ">|", "<<",
                                                                  "<<-"):
            self.eat()
            if self.cur().kind == "word":
                self.eat()

    def parse_if(self):
        self.eat()
        self.parse_list({"then"}, "in an if condition")
        self.expect_word("then")
        self.parse_list({"elif", "else", "fi"}, "inside if/then")
        while self.at_word("elif"):
            self.eat()
            self.parse_list({"then"}, "in an elif condition")
            self.expect_word("then")
            self.parse_list({"elif", "else", "fi"}, "inside elif/then")
        if self.at_word("else"):
            self.eat()
            self.parse_list({"fi"}, "inside else")
        self.expect_word("fi")
        self.redirections()
        return ["if"]

    def parse_loop(self):
        kind = self.eat().text
        if kind == "for":
            self.eat()   # the name
            if self.at_word("in"):
                self.eat()
                while self.cur().kind == "word":
                    self.eat()
            if self.cur().kind == "op" and self.cur().text == ";":
                self.eat()
            self.skip_nl()
        else:
            self.parse_list({"do"}, "in a %s condition" % kind)
        line = self.cur().line
        self.expect_word("do")
        chains = self.parse_list({"done"}, "inside a %s loop" % kind)
        last = chains[-1][1] if chains else None
        if not (last and last[0] == "||" and last[1][:1] in (["return"], ["exit"])):
            raise LintError(line, "a %s loop body that does not end with '|| return 1' (or '|| exit 1')" % kind)
        self.expect_word("done")
        self.redirections()
        return ["loop"]

    def parse_case(self):
        self.eat()
        self.eat()   # the word
        self.expect_word("in")
        self.skip_nl()
        while not self.at_word("esac"):
            if self.cur().kind == "op" and self.cur().text == "(":
                self.eat()
            while not (self.cur().kind == "op" and self.cur().text == ")"):
                if self.cur().kind == "eof":
                    raise LintError(self.cur().line, "unterminated case")
                self.eat()
            self.eat()
            self.parse_list({";;", "esac"}, "inside a case arm")
            if self.cur().kind == "op" and self.cur().text == ";;":
                self.eat()
            self.skip_nl()
        self.eat()
        self.redirections()
        return ["case"]


def lint_body(body):
    """None when body is one && chain, else (line within body, message)."""
    try:
        p = Parser(Lexer(body).tokens())
        p.parse_list(set(), "at the top of the body")
        if p.cur().kind != "eof":
            raise LintError(p.cur().line, "unexpected %r" % p.cur().text)
    except LintError as e:
        return e.line, e.msg
    return None


def unquote_words(toks):
    """The text of a word of the test script as the shell would pass it (quotes removed, no expansion)."""
    out = []
    for t in toks:
        s, i, w = t.text, 0, []
        while i < len(s):
            c = s[i]
            if c == "'":
                j = s.index("'", i + 1)
                w.append(s[i + 1:j])
                i = j + 1
            elif c == '"':
                j, buf = i + 1, []
                while s[j] != '"':
                    if s[j] == "\\" and s[j + 1] in '"\\$`\n':
                        buf.append(s[j + 1])
                        j += 2
                    else:
                        buf.append(s[j])
                        j += 1
                w.append("".join(buf))
                i = j + 1
            elif c == "\\":
                w.append(s[i + 1:i + 2])
                i += 2
            else:
                w.append(c)
                i += 1
        out.append("".join(w))
    return out


def lint_file(path):
    """Every test_expect_success/test_expect_failure body in a test script; returns the problems."""
    text = open(path, encoding="utf-8").read()
    problems = []
    try:
        toks = Lexer(text).tokens()
    except LintError as e:
        return ["%s:%d: %s" % (path, e.line, e.msg)]
    for i, t in enumerate(toks):
        if t.kind != "word" or t.text not in ("test_expect_success", "test_expect_failure"):
            continue
        args = []
        j = i + 1
        while toks[j].kind == "word":
            args.append(toks[j])
            j += 1
        if len(args) != 2:
            problems.append("%s:%d: %s needs a name and a body" % (path, t.line, t.text))
            continue
        name, body = unquote_words(args)
        bad = lint_body(body)
        if bad:
            problems.append('%s:%d: broken &&-chain in "%s": %s' % (path, args[1].line + bad[0] - 1, name,
                                                                  bad[1]))
    return problems


def main(argv):
    if argv == ["-"]:
        bad = lint_body(sys.stdin.read())
        if bad:
            print("line %d of the body: %s" % bad)
            return 1
        return 0
    problems = []
    for path in argv:
        problems += lint_file(path)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
