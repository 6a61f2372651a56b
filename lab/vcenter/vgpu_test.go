package main

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestMergeAllocation(t *testing.T) {
	reservation, limit, newReservation := int64(0), int64(-1), int64(4096)
	shares := &types.SharesInfo{Level: types.SharesLevelNormal}
	merged := mergeAllocation(&types.ResourceAllocationInfo{Reservation: &reservation, Limit: &limit, Shares: shares},
		&types.ResourceAllocationInfo{Reservation: &newReservation})
	if *merged.Reservation != 4096 || merged.Limit != &limit || merged.Shares != shares {
		t.Errorf("a partial allocation keeps the other fields: %+v", merged)
	}
}
