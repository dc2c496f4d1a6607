package policy

// This file reads sed scripts. GNU sed is an interpreter as far as the
// policy is concerned: its e command (and the e flag of s) runs a shell
// command, w and W (and the w flag) write a file, r and R read one — none
// of which the path analysis sees. A script is safe when it uses none of
// them; one that cannot be read with certainty is not.

import "strings"

// sedSafe reports whether a sed script only edits the stream: no e, w, W,
// r or R command, no e or w flag on s, and nothing this reader does not
// understand.
func sedSafe(script string) bool {
	s := sedReader{src: script}
	return s.script()
}

type sedReader struct {
	src string
	i   int
}

func (s *sedReader) eof() bool  { return s.i >= len(s.src) }
func (s *sedReader) peek() byte { return s.src[s.i] }

func (s *sedReader) skipBlanks() {
	for !s.eof() && (s.peek() == ' ' || s.peek() == '\t') {
		s.i++
	}
}

// script reads commands until the end.
func (s *sedReader) script() bool {
	for {
		for !s.eof() && strings.IndexByte(" \t\n;", s.peek()) >= 0 {
			s.i++
		}
		if s.eof() {
			return true
		}
		if !s.command() {
			return false
		}
	}
}

// address reads an optional address or range and a !.
func (s *sedReader) address() bool {
	for n := 0; n < 2; n++ {
		s.skipBlanks()
		if s.eof() {
			return true
		}
		switch c := s.peek(); {
		case c >= '0' && c <= '9':
			for !s.eof() && (s.peek() >= '0' && s.peek() <= '9' || s.peek() == '~') {
				s.i++
			}
		case c == '$':
			s.i++
		case c == '/' || c == '\\':
			if c == '\\' {
				s.i++
				if s.eof() {
					return false
				}
			}
			delim := s.peek()
			s.i++
			if _, ok := s.delimited(delim); !ok {
				return false
			}
			for !s.eof() && (s.peek() == 'I' || s.peek() == 'M') {
				s.i++
			}
		case n == 1 && (c == '+' || c == '~'):
			s.i++
			for !s.eof() && s.peek() >= '0' && s.peek() <= '9' {
				s.i++
			}
		default:
			if n == 1 {
				return false // a range needs its second address
			}
			return true
		}
		s.skipBlanks()
		if n == 0 && !s.eof() && s.peek() == ',' {
			s.i++
			continue
		}
		break
	}
	s.skipBlanks()
	for !s.eof() && s.peek() == '!' {
		s.i++
		s.skipBlanks()
	}
	return true
}

// delimited reads up to the unescaped delimiter and returns the text.
func (s *sedReader) delimited(delim byte) (string, bool) {
	start := s.i
	for !s.eof() {
		switch s.peek() {
		case '\\':
			s.i += 2
			continue
		case delim:
			text := s.src[start:s.i]
			s.i++
			return text, true
		case '\n':
			if delim != '\n' {
				return "", false
			}
		}
		s.i++
	}
	return "", false
}

// toEnd skips to the end of the line (the text of a, i, c, labels).
func (s *sedReader) toEnd(alsoSemicolon bool) {
	for !s.eof() && s.peek() != '\n' && !(alsoSemicolon && (s.peek() == ';' || s.peek() == '}')) {
		if s.peek() == '\\' {
			s.i++
		}
		s.i++
	}
}

// command reads one command with its address.
func (s *sedReader) command() bool {
	if !s.peekComment() && !s.address() {
		return false
	}
	if s.eof() {
		return false
	}
	c := s.peek()
	s.i++
	switch c {
	case '#', ':':
		s.toEnd(c == ':')
		return true
	case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		return true
	case 'l', 'L', 'q', 'Q':
		s.skipBlanks()
		for !s.eof() && s.peek() >= '0' && s.peek() <= '9' {
			s.i++
		}
		return true
	case 'b', 't', 'T', 'v':
		s.toEnd(true)
		return true
	case 'a', 'i', 'c':
		s.toEnd(false)
		return true
	case 'y':
		if s.eof() {
			return false
		}
		d := s.peek()
		s.i++
		_, ok1 := s.delimited(d)
		_, ok2 := s.delimited(d)
		return ok1 && ok2
	case 's':
		if s.eof() || s.peek() == '\n' || s.peek() == '\\' {
			return false
		}
		d := s.peek()
		s.i++
		if _, ok := s.delimited(d); !ok {
			return false
		}
		if _, ok := s.delimited(d); !ok {
			return false
		}
		for !s.eof() && strings.IndexByte(" \t\n;}", s.peek()) < 0 {
			if strings.IndexByte("gpiImM0123456789", s.peek()) < 0 {
				return false // e runs the pattern space; w writes a file
			}
			s.i++
		}
		return true
	}
	return false // e, r, R, w, W, or something unknown
}

// peekComment reports whether a comment starts here (it has no address).
func (s *sedReader) peekComment() bool {
	s.skipBlanks()
	return !s.eof() && s.peek() == '#'
}

// sedScripts returns the scripts a sed command runs (its -e values, or
// its first operand) and whether they are all known: a script from a file
// (-f) or only known at run time is not.
func sedScripts(c Command) (scripts []string, known bool) {
	given, first := false, -1
	for i := 1; i < len(c.Words); i++ {
		w := c.Words[i]
		switch {
		case w == "--":
			if first < 0 && i+1 < len(c.Words) {
				first = i + 1
			}
			i = len(c.Words)
		case c.Dynamic[i] && strings.HasPrefix(w, "-"):
			return nil, false
		case w == "--expression" || w == "--line-length":
			if i+1 >= len(c.Words) || c.Dynamic[i+1] {
				return nil, false
			}
			if w == "--expression" {
				scripts, given = append(scripts, c.Words[i+1]), true
			}
			i++
		case strings.HasPrefix(w, "--expression="):
			scripts, given = append(scripts, strings.TrimPrefix(w, "--expression=")), true
		case strings.HasPrefix(w, "--file") || strings.HasPrefix(w, "--in-place"):
			if strings.HasPrefix(w, "--file") {
				return nil, false
			}
		case strings.HasPrefix(w, "--"):
		case strings.HasPrefix(w, "-") && w != "-":
			// A group of short options: e, f and l take a value (the
			// rest of the word or the next one), i an attached suffix.
		letters:
			for j := 1; j < len(w); j++ {
				switch w[j] {
				case 'f':
					return nil, false
				case 'i':
					break letters
				case 'e', 'l':
					val := w[j+1:]
					if val == "" {
						if i+1 >= len(c.Words) || c.Dynamic[i+1] {
							return nil, false
						}
						i++
						val = c.Words[i]
					}
					if w[j] == 'e' {
						scripts, given = append(scripts, val), true
					}
					break letters
				}
			}
		default:
			if first < 0 {
				first = i
			}
		}
	}
	if given {
		return scripts, true
	}
	if first < 0 {
		return nil, true
	}
	if c.Dynamic[first] {
		return nil, false
	}
	return []string{c.Words[first]}, true
}

// sedRisk is why a sed command must be asked about whatever rule allows
// it, or "".
func sedRisk(c Command) string {
	if baseName(c.Name()) != "sed" && c.Name() != "sed" {
		return ""
	}
	scripts, known := sedScripts(c)
	if !known {
		return "sed runs a script that is not analysed (-f, or only known at run time)"
	}
	for _, s := range scripts {
		if !sedSafe(s) {
			return "the sed script uses e, w or r (which run a command or touch a file) or cannot be read with certainty"
		}
	}
	return ""
}

// sedOpts are the options of a read-only sed. Left out: -i (rewrites its
// files), -f (a script from a file), -c.
var sedOpts = spec("nErszue:l:", "quiet silent regexp-extended separate null-data unbuffered posix debug sandbox expression= line-length= help version")
