package main

import (
	"testing"

	"vcsim/labtest"
	"vcsim/topology"
)

func TestBoardsWithSeveralGPUs(t *testing.T) {
	models := labtest.Catalog(t)
	models.GPUs["T4"].GPUsPerBoard = 4 // as an A16 board
	h := newHostState(NewLab(models), hostRef("host-1"), "h", []*topology.GPUSpec{{Model: "T4", Count: 2}}, models)
	if len(h.gpus) != 8 || h.gpus[7].pciID != "0000:4b:00.0" {
		t.Errorf("2 boards of 4 GPUs: %d GPUs, last %s", len(h.gpus), h.gpus[len(h.gpus)-1].pciID)
	}
}
