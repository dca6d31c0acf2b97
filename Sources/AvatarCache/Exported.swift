// The layers below this module's (the model, the index, the lookup) are a module of their
// own, AvatarCacheLookup, for what links no image code; importing AvatarCache brings them.
@_exported import AvatarCacheLookup
