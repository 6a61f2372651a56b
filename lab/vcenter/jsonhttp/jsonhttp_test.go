package jsonhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestErrorAnswersJSON(t *testing.T) {
	w := httptest.NewRecorder()
	Error(w, http.StatusBadRequest, "faults: %s", "bad kind")
	if w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/json" ||
		w.Body.String() != "{\n \"error\": \"faults: bad kind\"\n}\n" {
		t.Errorf("answered %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
}
