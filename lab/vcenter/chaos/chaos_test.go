package chaos

import (
	"reflect"
	"testing"
)

func draws(seed int64, n int) []string {
	c := New()
	cfg := Config{Seed: seed, Rate: 0.3, Seconds: 60}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	c.Start(cfg)
	out := make([]string, n)
	for i := range out {
		out[i] = c.Pick("RetrievePropertiesEx")
	}
	return out
}

func TestChaosIsSeededAndKeepsItsShare(t *testing.T) {
	first, again, other := draws(7, 2000), draws(7, 2000), draws(8, 2000)
	if !reflect.DeepEqual(first, again) {
		t.Fatal("the same seed drew other faults")
	}
	if reflect.DeepEqual(first, other) {
		t.Fatal("another seed drew the same faults")
	}
	failed := 0
	for _, kind := range first {
		if kind != "" {
			failed++
		}
	}
	if failed < 500 || failed > 700 {
		t.Fatalf("%d of 2000 requests failed at rate 0.3", failed)
	}
}
