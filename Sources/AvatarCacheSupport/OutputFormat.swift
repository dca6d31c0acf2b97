/// Output encoding of the cache files.
public enum OutputFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, webp

    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .png: return "png"
        case .webp: return "webp"
        }
    }
}
