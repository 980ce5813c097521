package models

// Error is the body of every error response: {"error": "..."}.
type Error struct {
	Error string `json:"error"`
}
