// Package settings holds typed advanced options as vCenter and ESXi keep them: vCenter's content.setting with the
// options the lab adds (vGPU vMotion), and each host's advanced options with ESXi's definitions (esxi.go), whose set
// of keys is fixed. An option that has a definition only takes values of its type.
package settings

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// Manager is vCenter's content.setting with typed options: an option that has a definition in
// supportedOption only accepts values of its type, as vCenter does.
type Manager struct {
	simulator.OptionManager
	// fixedKeys: no option can be added, as on ESXi, whose set of advanced options is fixed (vSphere Web Services
	// API, OptionManager.UpdateOptions: InvalidName "if one or more OptionValue objects refers to a non-existent
	// option"). vCenter's own settings take new keys.
	fixedKeys bool
}

// Option is an advanced setting with its definition (supportedOption) and default value.
type Option struct {
	Key, label, summary string
	def                 types.BaseOptionType
	value               interface{}
}

// VGPUHotMigrate is vCenter's advanced setting that allows vMotion of powered-on VMs with vGPU devices.
const VGPUHotMigrate = "vgpu.hotmigrate.enabled"

// VCenterOptions are the vCenter advanced settings the lab adds to the simulator's.
var VCenterOptions = []Option{
	{VGPUHotMigrate, "vGPU vMotion", "Allow vMotion of powered-on virtual machines with vGPU devices",
		&types.BoolOption{Supported: true, DefaultValue: false}, false},
}

// NewManager makes an option manager of the simulator's om with options added; fixedKeys: no option can be added.
func NewManager(om *simulator.OptionManager, options []Option, fixedKeys bool) *Manager {
	m := &Manager{OptionManager: *om, fixedKeys: fixedKeys}
	// The simulator's defaults are shared by every simulator of the process and UpdateOptions changes an option in
	// place: each lab gets its own copies, so a reset brings the defaults back.
	m.Setting = make([]types.BaseOptionValue, 0, len(om.Setting)+len(options))
	for _, o := range om.Setting {
		value := *o.GetOptionValue()
		m.Setting = append(m.Setting, &value)
	}
	m.SupportedOption = append([]types.OptionDef(nil), om.SupportedOption...)
	for _, o := range options {
		m.SupportedOption = append(m.SupportedOption, types.OptionDef{
			ElementDescription: types.ElementDescription{
				Description: types.Description{Label: o.label, Summary: o.summary},
				Key:         o.Key,
			},
			OptionType: o.def,
		})
		if m.Value(o.Key) == nil {
			m.Setting = append(m.Setting, &types.OptionValue{Key: o.Key, Value: o.value})
		}
	}
	return m
}

func (m *Manager) UpdateOptions(req *types.UpdateOptions) soap.HasFault {
	for _, change := range req.ChangedValue {
		opt := change.GetOptionValue()
		if m.fixedKeys && m.Value(opt.Key) == nil {
			return &methods.UpdateOptionsBody{Fault_: simulator.Fault("", &types.InvalidName{Name: opt.Key})}
		}
		if f := m.check(opt); f != nil {
			return &methods.UpdateOptionsBody{Fault_: f.SOAP()}
		}
	}
	body := m.OptionManager.UpdateOptions(req)
	if body.Fault() == nil {
		simulator.Map.Update(m, []types.PropertyChange{{Name: "setting", Val: m.Setting}})
	}
	return body
}

// check refuses a value whose type differs from the option's definition (a string "true" for a bool option).
func (m *Manager) check(opt *types.OptionValue) *vimfault.Fault {
	for _, d := range m.SupportedOption {
		if d.Key != opt.Key {
			continue
		}
		var ok bool
		switch t := d.OptionType.(type) {
		case *types.BoolOption:
			_, ok = opt.Value.(bool)
		case *types.IntOption:
			_, ok = opt.Value.(int32)
		case *types.LongOption:
			_, ok = opt.Value.(int64)
		case *types.StringOption:
			_, ok = opt.Value.(string)
		case *types.ChoiceOption:
			s, isString := opt.Value.(string)
			ok = isString && choiceAllowed(t, s)
		default:
			ok = true
		}
		if !ok {
			return vimfault.InvalidArgument(opt.Key, "the option takes a %s value, got %s", optionTypeName(d.OptionType),
				describeValue(opt.Value))
		}
	}
	return nil
}

func choiceAllowed(t *types.ChoiceOption, value string) bool {
	for _, c := range t.ChoiceInfo {
		if c.GetElementDescription().Key == value {
			return true
		}
	}
	return false
}

func optionTypeName(t types.BaseOptionType) string {
	switch t.(type) {
	case *types.BoolOption:
		return "boolean"
	case *types.IntOption:
		return "int"
	case *types.LongOption:
		return "long"
	case *types.ChoiceOption:
		return "choice"
	}
	return "string"
}

func describeValue(v interface{}) string {
	if v == nil {
		return "no value"
	}
	return fmt.Sprintf("%T %v", v, v)
}

// value returns the current value of a setting.
// Value is the value of the option key, or nil.
func (m *Manager) Value(key string) interface{} {
	for _, s := range m.Setting {
		if o := s.GetOptionValue(); o.Key == key {
			return o.Value
		}
	}
	return nil
}
