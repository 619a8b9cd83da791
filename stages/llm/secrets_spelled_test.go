package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// spelledKey has a character of each class some JSON encoder escapes: "/"
// (escaped slashes), "=" (Gson, base64 padding), "'" and "<" (HTML-safe
// encoders).
const spelledKey = "sk-b64/Zm9v+YmFy='x<y"

// holdsKey reports the first 8-byte fragment of key that s holds: any one
// would narrow a search for the rest.
func holdsKey(s, key string) (string, bool) {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(s, key[i:i+8]) {
			return key[i : i+8], true
		}
	}
	return "", false
}

// TestEscapedEchoesNeverReturned: servers that echo the request's
// Authorization header in a reply, in every spelling a JSON encoder can
// give it (\u escapes of every or every other character, either case of
// hex, escaped slashes, Gson's \u003d, a JSON document nested in a string),
// through every channel of every kind: a chat answer, a chat error, the
// model an embeddings reply names, an embeddings error, a TEI token's text
// and a TEI error. Nothing the clients return (answers, models, bodies,
// errors) nor any log line holds 8 bytes of the key, and each echo shows
// as Redacted where the key was, so the test cannot pass by losing the echo.
func TestEscapedEchoesNeverReturned(t *testing.T) {
	env := testEnv(map[string]string{"TEST_KEY": spelledKey})
	for _, sp := range llmtest.Spellings {
		t.Run(sp.String(), func(t *testing.T) {
			var logs bytes.Buffer
			log := WithLogger(zerolog.New(&logs).Level(zerolog.DebugLevel))
			var texts []string
			masked := map[string]bool{}
			keep := func(channel string, err error, more ...string) {
				masked[channel] = masked[channel] || false // every channel must show the mask
				if err != nil {
					texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
					more = append(more, err.Error())
				}
				for _, s := range more {
					// Nested: the text a client returns is itself JSON
					// text; decode it as an answer parser would.
					if dec, err := unquote(s); err == nil {
						more = append(more, dec)
					}
					if strings.Contains(s, httpcall.Redacted) {
						masked[channel] = true
					}
				}
				texts = append(texts, more...)
			}

			chat := llmtest.New(llmtest.WithAPIKey(spelledKey))
			defer chat.Close()
			echo := llmtest.Fault{EchoHeaders: true, EchoSpelling: sp}
			chatErr := echo
			chatErr.Status = 400
			chat.Enqueue(echo, chatErr, echo, chatErr)
			oa := serviceClient(t, testProvider(chat), WithHTTPClient(chat.HTTPClient(1)), env, log)
			resp, err := oa.(Client).Complete(bg, userRequest("m1", "hi"))
			if err != nil {
				t.Fatal(err)
			}
			keep("chat answer", nil, resp.Text, resp.Reasoning, resp.Model, resp.SystemFingerprint)
			_, err = oa.(Client).Complete(bg, userRequest("m1", "hi"))
			keep("chat error", err)
			sresp, err := oa.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
			if err != nil {
				t.Fatal(err)
			}
			keep("openai embeddings model", nil, sresp.Model, string(sresp.Body))
			_, err = oa.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
			keep("openai embeddings error", err)

			emb := llmtest.New(llmtest.WithAPIKey(spelledKey))
			defer emb.Close()
			embErr := echo
			embErr.Status = 500
			emb.Enqueue(echo, embErr)
			p := provider(t, "emb", "embeddings", emb.URL, map[string]any{"api_key_env": "TEST_KEY", "max_retries": 0})
			ec := serviceClient(t, p, WithHTTPClient(emb.HTTPClient(1)), env, log)
			sresp, err = ec.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
			if err != nil {
				t.Fatal(err)
			}
			keep("embeddings model", nil, sresp.Model, string(sresp.Body))
			_, err = ec.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
			keep("embeddings error", err)

			tei := llmtest.NewTEI(llmtest.WithTEIAPIKey(spelledKey))
			defer tei.Close()
			tei.Enqueue(llmtest.TEIFault{Path: llmtest.TEITokenizePath, EchoHeaders: true, EchoSpelling: sp},
				llmtest.TEIFault{Path: llmtest.TEITokenizePath, Status: 424, EchoHeaders: true, EchoSpelling: sp})
			tc := serviceClient(t, provider(t, "tei", "tei", tei.URL, map[string]any{"api_key_env": "TEST_KEY"}), WithHTTPClient(tei.Client()), env, log)
			sresp, err = tc.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Body: inputBodyOf("some words")})
			if err != nil {
				t.Fatal(err)
			}
			keep("tei body", nil, string(sresp.Body))
			var body tokenVectorsBody
			if err := json.Unmarshal(sresp.Body, &body); err != nil {
				t.Fatal(err)
			}
			keep("tei token", nil, body.Inputs[0].Tokens...)
			_, err = tc.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Body: inputBodyOf("some words")})
			keep("tei error", err)

			texts = append(texts, logs.String())
			for _, s := range texts {
				if frag, ok := holdsKey(s, spelledKey); ok {
					t.Errorf("text holds %q of the key: %s", frag, s)
				}
			}
			for channel, ok := range masked {
				if !ok {
					t.Errorf("the %s shows no %s: the echo was lost rather than masked", channel, httpcall.Redacted)
				}
			}
		})
	}
}

// unquote decodes s as the inside of a JSON string.
func unquote(s string) (string, error) {
	var out string
	err := json.Unmarshal([]byte(`"`+s+`"`), &out)
	return out, err
}
