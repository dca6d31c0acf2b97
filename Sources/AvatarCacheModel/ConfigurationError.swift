/// A configuration value that makes no sense; `message` names the option.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
