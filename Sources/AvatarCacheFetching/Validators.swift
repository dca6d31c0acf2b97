/// The validators of a cached photo, for a conditional GET.
public struct Validators: Sendable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }
}
