package settings

import "github.com/vmware/govmomi/vim25/types"

// ESXiOptions are the ESXi advanced settings (HostSystem.configManager.advancedOption) the lab's hosts
// define in supportedOption, with ESXi's types and defaults, so that clients can check a value against its type
// before UpdateOptions as they do on ESXi. The simulator has the values of a few settings but no definitions.
// (Keys, types and defaults as ESXi 8.0 lists them under System > Advanced System Settings; the choice list of
// Config.HostAgent.log.level is hostd's log levels. Not confirmed against a recording of supportedOption.)
var ESXiOptions = []Option{
	{"Config.HostAgent.log.level", "Host agent log level", "Logging level of the host agent (hostd)",
		&types.ChoiceOption{OptionType: types.OptionType{ValueIsReadonly: types.NewBool(false)},
			ChoiceInfo:   choices("none", "quiet", "panic", "error", "warning", "info", "verbose", "trivia"),
			DefaultIndex: 5}, "info"},
	{"Config.HostAgent.plugins.solo.enableMob", "Enable the MOB", "Enable the managed object browser",
		&types.BoolOption{DefaultValue: false}, false},
	{"Syslog.global.logDirUnique", "Unique log directory", "Place logs in a subdirectory named after the host " +
		"under Syslog.global.logDir", &types.BoolOption{DefaultValue: false}, false},
	{"UserVars.SuppressShellWarning", "Suppress shell warning", "Do not show a warning when the ESXi shell or SSH " +
		"is enabled", &types.LongOption{Min: 0, Max: 1, DefaultValue: 0}, int64(0)},
	{"UserVars.ESXiShellTimeOut", "ESXi shell time-out", "Seconds before the ESXi shell and SSH are disabled; 0 " +
		"never", &types.LongOption{Min: 0, Max: 86400, DefaultValue: 0}, int64(0)},
}

func choices(keys ...string) []types.BaseElementDescription {
	out := make([]types.BaseElementDescription, len(keys))
	for i, key := range keys {
		out[i] = &types.ElementDescription{Key: key, Description: types.Description{Label: key, Summary: key}}
	}
	return out
}
