import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultRegistry

extension Registry {
    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List devices: a user's, the active or revoked ones, those not seen since a date.",
            discussion: """
            Filters combine; with none, every device is listed. --match finds a device by part of \
            its id or name, as support hears it on the phone.

            Examples:
              device-revoker registry devices --db registry.sqlite --user did:plc:josh
              device-revoker registry devices --db registry.sqlite --active \\
                --not-seen-since 2025-01-01
              device-revoker registry devices --db registry.sqlite --match ipad --json
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("Only this user's devices.", valueName: "DID")) var user: String?
        @Flag(help: "Only active devices.") var active = false
        @Flag(help: "Only revoked devices.") var revoked = false
        @Option(help: ArgumentHelp("Only devices not seen since this date.", valueName: "DATE")) var notSeenSince: String?
        @Option(help: ArgumentHelp("Only devices whose id or name contains TEXT (any case).", valueName: "TEXT")) var match: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var now: NowOption

        func validate() throws {
            if active, revoked { throw ValidationError("choose --active or --revoked, not both") }
            if let notSeenSince { _ = try registryCutoff(notSeenSince, now: now.time) }
        }

        func run() throws {
            let filter = DeviceRegistry.DeviceFilter(user: user, state: active ? .active : revoked ? .revoked : .any,
                                                     notSeenSince: try notSeenSince.map { try registryCutoff($0, now: self.now.time) }, search: match)
            let devices = try database.open(.readOnly).devices(matching: filter)
            if json {
                try StandardStreams.writeOutput(JSONValue.array(devices.map { device in
                    func time(_ value: Timestamp?) -> JSONValue { value.map { .string($0.rfc3339) } ?? .null }
                    return .object([
                        ("userDid", .string(device.userDid)), ("deviceId", .string(device.deviceId)), ("deviceMlsDid", .string(device.deviceMlsDid)),
                        ("deviceName", device.deviceName.map(JSONValue.string) ?? .null), ("isActive", .bool(device.isActive)),
                        ("registeredAt", time(device.registeredAt)), ("lastSeenAt", time(device.lastSeenAt)), ("revokedAt", time(device.revokedAt)),
                        ("revocationReason", device.revocationReason.map(JSONValue.string) ?? .null),
                        ("openMemberships", .int(device.openMemberships)),
                    ])
                }).serialized())
                return
            }
            guard !devices.isEmpty else {
                diagnostics.note("no device matches")
                return
            }
            let now = now.time
            var table = TextTable()
            table.add("device", "name", "state", "last seen", "conversations")
            for device in devices {
                let state = device.revokedAt.map { "revoked \(TimeSpan.relative($0, now: now))" } ?? (device.isActive ? "active" : "revoked")
                let seen = device.lastSeenAt.map { TimeSpan.relative($0, now: now) } ?? "never (registered \(TimeSpan.relative(device.registeredAt, now: now)))"
                table.add("\(device.userDid)#\(device.deviceId)", device.deviceName ?? "", state, seen, "\(device.openMemberships)")
            }
            try StandardStreams.writeOutput(Array(table.render().utf8))
            diagnostics.note("\(counted(devices.count, "device"))")
        }
    }
}
