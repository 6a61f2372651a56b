// Package jsonhttp writes the lab's JSON answers: the lab endpoints' and the REST APIs'.
package jsonhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Write answers v as indented JSON with the status.
func Write(w http.ResponseWriter, status int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	_ = enc.Encode(v)
}

// Error answers {"error": message} with the status.
func Error(w http.ResponseWriter, status int, format string, args ...interface{}) {
	Write(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}
