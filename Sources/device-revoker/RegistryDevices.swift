import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultRegistry

extension Registry {
    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "devices",
            abstract: "List devices: a user's, the active or revoked ones, those not seen since a date.",
            discussion: """
            Filters combine; with none, every device is listed. --match finds a device by part of \
            its id or name, as support hears it on the phone.

            Examples:
              device-revoker registry devices --db registry.sqlite --user did:plc:josh
              device-revoker registry devices --db registry.sqlite --active \\
                --not-seen-since 2025-01-01
              device-revoker registry devices --db registry.sqlite --match ipad --json
              device-revoker registry devices --db devices.sqlite \\
                --user 0f9c2d1e-8b7a-4c3d-9e2f-1a2b3c4d5e6f
            """
        )
        @OptionGroup var database: Database
        @Option(help: ArgumentHelp("Only this user's devices (a DID, or Family Medical's user UUID).", valueName: "USER")) var user: String?
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
            let registry = try database.open(.readOnly)
            let devices = try registry.devices(matching: filter)
            let catbird = registry.schema == .catbird
            if json {
                try StandardStreams.writeOutput(JSONValue.array(devices.map { device in
                    func time(_ value: Timestamp?) -> JSONValue { value.map { .string($0.rfc3339) } ?? .null }
                    func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
                    // Each schema's own fields, named as its columns are.
                    return catbird ? .object([
                        ("userDid", .string(device.userDid)), ("deviceId", .string(device.deviceId)), ("deviceMlsDid", text(device.deviceMlsDid)),
                        ("deviceName", text(device.deviceName)), ("isActive", .bool(device.isActive)),
                        ("registeredAt", time(device.registeredAt)), ("lastSeenAt", time(device.lastSeenAt)), ("revokedAt", time(device.revokedAt)),
                        ("revocationReason", text(device.revocationReason)),
                        ("openMemberships", .int(device.openMemberships ?? 0)),
                    ]) : .object([
                        ("userId", .string(device.userDid)), ("deviceId", .string(device.deviceId)), ("deviceName", text(device.deviceName)),
                        ("deviceType", text(device.deviceType)), ("isActive", .bool(device.isActive)),
                        ("firstSeenAt", time(device.registeredAt)), ("lastSeenAt", time(device.lastSeenAt)), ("revokedAt", time(device.revokedAt)),
                        ("revocationReason", text(device.revocationReason)),
                    ])
                }).reported())
                return
            }
            guard !devices.isEmpty else {
                diagnostics.note("no device matches")
                return
            }
            let now = now.time
            // What a parent sees in Settings > Devices: the name, and when it was last seen.
            var table = TextTable()
            if catbird { table.add("device", "name", "state", "last seen", "conversations") } else { table.add("device", "name", "type", "state", "last seen") }
            for device in devices {
                let state = device.revokedAt.map { "revoked \(TimeSpan.relative($0, now: now))" } ?? (device.isActive ? "active" : "revoked")
                let seen = device.lastSeenAt.map { TimeSpan.relative($0, now: now) } ?? device.registeredAt.map { "never (registered \(TimeSpan.relative($0, now: now)))" } ?? "never (no time recorded)"
                let id = "\(device.userDid)#\(device.deviceId)"
                if catbird {
                    table.add(id, device.deviceName ?? "", state, seen, "\(device.openMemberships ?? 0)")
                } else {
                    table.add(id, device.deviceName ?? "", device.deviceType ?? "", state, seen)
                }
            }
            try StandardStreams.writeOutput(Array(table.render().utf8))
            diagnostics.note("\(counted(devices.count, "device"))")
        }
    }
}
