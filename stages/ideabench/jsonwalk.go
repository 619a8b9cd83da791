package ideabench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// Prepare runs for every node on every plan, cached or not, because a model
// node's key is its rendered request. encoding/json validates and then
// decodes the whole input, which for a target record with a dozen reference
// abstracts cost ~200µs per rank node: 40 s over 200k nodes. These walkers
// read the few fields a prompt needs and skip the rest with a byte scan. They
// trust their input to be valid JSON (it is: the engine hands over canonical
// outputs) and only guard against structural surprises.

var errTruncated = errors.New("unexpected end of JSON")

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at d[i] == '"'.
func skipString(d []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return 0, errTruncated
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		bs := 0
		for b := j - 1; b > i && d[b] == '\\'; b-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// skipValue returns the index just past the value starting at d[i].
func skipValue(d []byte, i int) (int, error) {
	if i >= len(d) {
		return 0, errTruncated
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				j, err := skipString(d, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errTruncated
	}
	j := i
	for j < len(d) && d[j] != ',' && d[j] != '}' && d[j] != ']' && d[j] != ' ' && d[j] != '\n' && d[j] != '\t' && d[j] != '\r' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("unexpected %q at offset %d", d[i], i)
	}
	return j, nil
}

// walkObject calls visit with each member of the object d (key unescaped,
// value raw) until visit asks to stop.
func walkObject(d []byte, visit func(key []byte, value []byte) (stop bool, err error)) error {
	i := skipSpace(d, 0)
	if bytes.Equal(d[i:], []byte("null")) {
		return nil // as encoding/json treats a null struct
	}
	if i >= len(d) || d[i] != '{' {
		return fmt.Errorf("expected a JSON object")
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return fmt.Errorf("expected a key at offset %d", i)
		}
		end, err := skipString(d, i)
		if err != nil {
			return err
		}
		key := d[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			if err := json.Unmarshal(d[i:end], &s); err != nil {
				return err
			}
			key = []byte(s)
		}
		i = skipSpace(d, end)
		if i >= len(d) || d[i] != ':' {
			return fmt.Errorf("expected ':' at offset %d", i)
		}
		i = skipSpace(d, i+1)
		end, err = skipValue(d, i)
		if err != nil {
			return err
		}
		if stop, err := visit(key, d[i:end]); stop || err != nil {
			return err
		}
		i = skipSpace(d, end)
		if i >= len(d) {
			return errTruncated
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return nil
		default:
			return fmt.Errorf("unexpected %q at offset %d", d[i], i)
		}
	}
}

// walkArray calls visit with each raw element of the array d (null: none).
func walkArray(d []byte, visit func(value []byte) error) error {
	i := skipSpace(d, 0)
	if bytes.Equal(d[i:], []byte("null")) {
		return nil
	}
	if i >= len(d) || d[i] != '[' {
		return fmt.Errorf("expected a JSON array")
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(d, i)
		if err != nil {
			return err
		}
		if err := visit(d[i:end]); err != nil {
			return err
		}
		i = skipSpace(d, end)
		if i >= len(d) {
			return errTruncated
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case ']':
			return nil
		default:
			return fmt.Errorf("unexpected %q at offset %d", d[i], i)
		}
	}
}

// stringValue decodes a raw JSON string (null: "").
func stringValue(raw []byte) (string, error) {
	if string(raw) == "null" {
		return "", nil
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("expected a string, got %.20s", raw)
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// stringsValue decodes a raw JSON array of strings (null: nil).
func stringsValue(raw []byte) ([]string, error) {
	var out []string
	err := walkArray(raw, func(v []byte) error {
		s, err := stringValue(v)
		out = append(out, s)
		return err
	})
	return out, err
}

// promptInput is what generate_ideas reads of a filter_references output.
type promptInput struct {
	keywords   []string
	references []Ref
	dropped    bool
}

func decodePromptInput(d []byte) (*promptInput, error) {
	p := &promptInput{}
	err := walkObject(d, func(key, value []byte) (bool, error) {
		var err error
		switch string(key) {
		case "dropped":
			p.dropped = string(value) == "true"
		case "target":
			err = walkObject(value, func(k, v []byte) (bool, error) {
				if string(k) != "keywords" {
					return false, nil
				}
				var err error
				p.keywords, err = stringsValue(v)
				return true, err
			})
		case "references":
			p.references = []Ref{}
			err = walkArray(value, func(v []byte) error {
				var r Ref
				err := walkObject(v, func(k, v []byte) (bool, error) {
					var err error
					switch string(k) {
					case "id":
						r.ID, err = stringValue(v)
					case "title":
						r.Title, err = stringValue(v)
					case "abstract":
						r.Abstract, err = stringValue(v)
					}
					return false, err
				})
				p.references = append(p.references, r)
				return err
			})
		}
		return false, err
	})
	return p, err
}

// decodeIdeas reads a generate_ideas output.
func decodeIdeas(d []byte) (ideas []string, dropped bool, err error) {
	err = walkObject(d, func(key, value []byte) (bool, error) {
		var err error
		switch string(key) {
		case "ideas":
			ideas, err = stringsValue(value)
		case "dropped":
			dropped = string(value) == "true"
		}
		return false, err
	})
	return ideas, dropped, err
}

// targetText reads the idea to rank against from a dataset record or a stage
// output: its "idea" if set, else its "abstract" (neither: a
// *stages.FieldError). A dataset record lists the idea before its
// references, so the scan usually stops early.
func targetText(in stages.In) (string, error) {
	var idea, abstract string
	err := walkObject(in.Output, func(key, value []byte) (bool, error) {
		var err error
		switch string(key) {
		case "idea":
			idea, err = stringValue(value)
			return strings.TrimSpace(idea) != "", err
		case "abstract":
			abstract, err = stringValue(value)
		}
		return false, err
	})
	if err != nil {
		return "", fmt.Errorf("decode: %w", err)
	}
	if s := strings.TrimSpace(idea); s != "" {
		return s, nil
	}
	if s := strings.TrimSpace(abstract); s != "" {
		return s, nil
	}
	return "", stages.MissingField(in, "the target's text", "idea", "abstract")
}
