package gpu

import (
	"testing"

	"vcsim/labtest"
	"vcsim/topology"
)

func TestBoardsWithSeveralGPUs(t *testing.T) {
	models := labtest.Catalog(t)
	models.GPUs["T4"].GPUsPerBoard = 4 // as an A16 board
	h := NewHost(nil, hostRef("host-1"), "h", []*topology.GPUSpec{{Model: "T4", Count: 2}}, models)
	if len(h.GPUs) != 8 || h.GPUs[7].PciID != "0000:4b:00.0" {
		t.Errorf("2 boards of 4 GPUs: %d GPUs, last %s", len(h.GPUs), h.GPUs[len(h.GPUs)-1].PciID)
	}
}
