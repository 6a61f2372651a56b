package main

import (
	"flag"
	"io"
	"log"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Verbose() {
		log.SetOutput(io.Discard) // the simulator and the lab log every fault they answer with
	}
	os.Exit(m.Run())
}
