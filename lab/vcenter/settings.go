package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// settingManager is vCenter's content.setting with typed options: an option that has a definition in
// supportedOption only accepts values of its type, as vCenter does.
type settingManager struct {
	simulator.OptionManager
	// fixedKeys: no option can be added, as on ESXi, whose set of advanced options is fixed (vSphere Web Services
	// API, OptionManager.UpdateOptions: InvalidName "if one or more OptionValue objects refers to a non-existent
	// option"). vCenter's own settings take new keys.
	fixedKeys bool
}

// labOption is an advanced setting with its definition (supportedOption) and default value.
type labOption struct {
	key, label, summary string
	def                 types.BaseOptionType
	value               interface{}
}

// labOptions are the vCenter advanced settings the lab adds to the simulator's.
var labOptions = []labOption{
	{hotMigrateSetting, "vGPU vMotion", "Allow vMotion of powered-on virtual machines with vGPU devices",
		&types.BoolOption{Supported: true, DefaultValue: false}, false},
}

func newSettingManager(om *simulator.OptionManager, options []labOption) *settingManager {
	m := &settingManager{OptionManager: *om}
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
				Key:         o.key,
			},
			OptionType: o.def,
		})
		if m.value(o.key) == nil {
			m.Setting = append(m.Setting, &types.OptionValue{Key: o.key, Value: o.value})
		}
	}
	return m
}

func (m *settingManager) UpdateOptions(req *types.UpdateOptions) soap.HasFault {
	for _, change := range req.ChangedValue {
		opt := change.GetOptionValue()
		if m.fixedKeys && m.value(opt.Key) == nil {
			return &methods.UpdateOptionsBody{Fault_: simulator.Fault("", &types.InvalidName{Name: opt.Key})}
		}
		if f := m.check(opt); f != nil {
			return &methods.UpdateOptionsBody{Fault_: f.soap()}
		}
	}
	body := m.OptionManager.UpdateOptions(req)
	if body.Fault() == nil {
		simulator.Map.Update(m, []types.PropertyChange{{Name: "setting", Val: m.Setting}})
	}
	return body
}

// check refuses a value whose type differs from the option's definition (a string "true" for a bool option).
func (m *settingManager) check(opt *types.OptionValue) *labFault {
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
			return invalidArgument(opt.Key, "the option takes a %s value, got %s", optionTypeName(d.OptionType),
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
func (m *settingManager) value(key string) interface{} {
	for _, s := range m.Setting {
		if o := s.GetOptionValue(); o.Key == key {
			return o.Value
		}
	}
	return nil
}
