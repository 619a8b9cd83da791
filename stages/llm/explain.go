package llm

import (
	"fmt"
	"net/http"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// explain prefixes a server's error message with what the status means for
// the user and which setting to check.
func (c *conn) explain(status int, code, msg, model string) string {
	switch status {
	case http.StatusUnauthorized:
		if c.p.APIKeyEnv == "" {
			return "authentication failed: " + msg + "; this provider sends no API key: name the environment variable that holds it with api_key_env"
		}
		return fmt.Sprintf("authentication failed: %s; the API key is read from environment variable %s: check that it holds a valid key for %s", msg, c.p.APIKeyEnv, c.endpoint())
	case http.StatusForbidden:
		return "permission denied: " + msg
	case http.StatusNotFound:
		return fmt.Sprintf("not found: %s; check base_url (%s) and the model name %q", msg, c.endpoint(), model)
	case http.StatusBadRequest:
		return "bad request: " + msg
	case http.StatusTooManyRequests:
		if code == httpcall.CodeInsufficientQuota {
			return "quota exhausted (not retried): " + msg
		}
		return "rate limited: " + msg
	}
	if status >= 500 {
		return "server error: " + msg
	}
	return msg
}

func (c *conn) endpoint() string {
	if c.p.BaseURL == "" {
		return "the default " + c.kind.Name + " endpoint"
	}
	return c.p.BaseURL
}
