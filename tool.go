package gatehouse

// ToolOn is the rule of tool switches: a tool is on in a workspace unless
// the workspace switched it off. switched is the workspace's stored switch
// of the tool, nil when it was never set; stores read it as it is and
// leave the default to this rule.
func ToolOn(switched *bool) bool { return switched == nil || *switched }
