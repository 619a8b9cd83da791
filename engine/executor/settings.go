package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// NormalizeSettings gives a provider's kind-specific settings the Go types
// Provider.Set stores them with: a JSON round trip turns an int into a
// float64 and a map(string) into a map of any, and the kind's code reads
// them by type (Provider.Int). Settings of a kind this binary does not
// register are left as they came (llm.New then refuses the kind).
func NormalizeSettings(p llm.Provider) llm.Provider {
	k, ok := llm.LookupKind(p.Kind)
	if !ok || len(p.Settings) == 0 {
		return p
	}
	p.Settings = maps.Clone(p.Settings)
	for name, v := range p.Settings {
		s, ok := k.Setting(name)
		if !ok {
			continue
		}
		switch s.Type {
		case llm.TypeInt:
			if f, ok := v.(float64); ok && f == float64(int(f)) {
				p.Settings[name] = int(f)
			}
		case llm.TypeStringMap:
			if m, ok := v.(map[string]any); ok {
				out := make(map[string]string, len(m))
				for mk, mv := range m {
					str, _ := mv.(string)
					out[mk] = str
				}
				p.Settings[name] = out
			}
		}
	}
	return p
}

// SettingsDigest names a provider's settings: equal digests, equal
// settings (encoding/json sorts map keys, so the encoding is canonical).
func SettingsDigest(p llm.Provider) string {
	b, err := json.Marshal(NormalizeSettings(p))
	if err != nil {
		return "unencodable"
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}
