package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
)

func decode(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	return nil
}
