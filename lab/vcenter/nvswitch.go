package main

import (
	"fmt"

	"vcsim/labapi"
)

func (h *hostState) nvswitchState() []labapi.NVSwitch {
	list := []labapi.NVSwitch{}
	for _, s := range h.NVSwitches {
		list = append(list, labapi.NVSwitch{PciID: s.PciID, DeviceID: fmt.Sprintf("0x%04x", s.DeviceID),
			DeviceName: s.Name})
	}
	return list
}
