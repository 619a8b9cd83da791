package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func panics(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
		}
	}()
	f()
	return ""
}

// TestRegisterKind: a kind registered from outside the package connects
// through its Open with the shared plumbing; misuse panics at init.
func TestRegisterKind(t *testing.T) {
	defer delete(kinds, "test_ext")
	var got Provider
	RegisterKind(KindInfo{Name: "test_ext", Doc: "test", Ops: []string{"x"}, DefaultConcurrency: 2,
		Settings: WithSettings(Without(HTTPSettings(2), "tokens_per_minute"), Setting{Name: "path", Type: TypeString, Path: true, Doc: "p"}),
		Open: func(p Provider, o Opener) (Client, error) {
			got = p
			c, err := o.Connect(lookupKindMust("test_ext"), p)
			if err != nil {
				return nil, err
			}
			if c.APIKey() != "sk-ext" || c.Caller().Provider != "e" || c.HTTP() == nil {
				t.Errorf("conn: key %q, caller %q", c.APIKey(), c.Caller().Provider)
			}
			return struct {
				ServiceOnly
				*Conn
			}{NewServiceOnly(p.Name, p.Kind), c}, nil
		}})
	k, _ := LookupKind("test_ext")
	if _, ok := k.Setting("tokens_per_minute"); ok || len(k.Settings) != len(HTTPSettings(2)) {
		t.Errorf("settings: %v", k.SettingNames())
	}
	p := NewProvider("e", "test_ext")
	p.APIKeyEnv = "K"
	p.Set("path", "a.jsonl")
	c, err := New(p, testEnv(map[string]string{"K": "sk-ext"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings["path"] != "a.jsonl" || c.Synthetic() {
		t.Errorf("provider %+v", got)
	}
	if _, _, err := c.Embed(context.Background(), "m", nil); err == nil || !strings.Contains(err.Error(), `kind "test_ext" does not serve operation "embeddings"`) {
		t.Errorf("Embed: %v", err)
	}
	if msg := panics(func() { RegisterKind(KindInfo{Name: "test_ext2"}) }); !strings.Contains(msg, "needs KindInfo.Open") {
		t.Errorf("no Open: %q", msg)
	}
	if msg := panics(func() { RegisterKind(KindInfo{Name: "mock", Open: k.Open}) }); !strings.Contains(msg, "registered twice") {
		t.Errorf("duplicate: %q", msg)
	}
}

// TestRegisterMockOp: the mock serves an operation registered for it, and
// refuses a second registration.
func TestRegisterMockOp(t *testing.T) {
	saved := kinds["mock"]
	defer func() { kinds["mock"] = saved; delete(mockOps, "test.op") }()
	RegisterMockOp("test.op", func(_ context.Context, p Provider, req ServiceRequest) (*ServiceResponse, error) {
		return &ServiceResponse{Body: json.RawMessage(`{"seed":` + string(rune('0'+p.Seed)) + `}`), Attempts: 1}, nil
	})
	p := NewProvider("m", "mock")
	p.Seed = 4
	c, _ := New(p)
	resp, err := c.(ServiceClient).Call(context.Background(), ServiceRequest{Op: "test.op", Body: json.RawMessage(`{}`)})
	if err != nil || string(resp.Body) != `{"seed":4}` {
		t.Fatalf("%s %v", resp.Body, err)
	}
	if msg := panics(func() { RegisterMockOp("test.op", nil) }); !strings.Contains(msg, `mock already serves "test.op"`) {
		t.Errorf("duplicate: %q", msg)
	}
	if msg := panics(func() { RegisterMockOp(OpEmbeddings, nil) }); msg == "" {
		t.Error("re-registering a built-in operation did not panic")
	}
}

func lookupKindMust(name string) KindInfo {
	k, ok := LookupKind(name)
	if !ok {
		panic(name)
	}
	return k
}
