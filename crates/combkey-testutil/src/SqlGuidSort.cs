// SQL Server's uniqueidentifier order, from an implementation that is not combkey's: .NET's
// System.Data.SqlTypes.SqlGuid (here Mono's System.Data), whose CompareTo is SQL Server's
// comparison of uniqueidentifier values.
//
// Reads GUID strings, one a line (as SQL Server shows them: display byte order), and prints
// them sorted by SqlGuid.CompareTo. Lines that compare equal keep their input order.
using System;
using System.Collections.Generic;
using System.Data.SqlTypes;

class SqlGuidSort
{
    static int Main()
    {
        var items = new List<KeyValuePair<SqlGuid, int>>();
        var lines = new List<string>();
        string line;
        while ((line = Console.In.ReadLine()) != null)
        {
            line = line.Trim();
            if (line.Length == 0) continue;
            items.Add(new KeyValuePair<SqlGuid, int>(new SqlGuid(line), lines.Count));
            lines.Add(line);
        }
        items.Sort((a, b) =>
        {
            int c = a.Key.CompareTo(b.Key);
            return c != 0 ? c : a.Value.CompareTo(b.Value);
        });
        var output = Console.Out;
        foreach (var kv in items) output.WriteLine(lines[kv.Value]);
        output.Flush();
        return 0;
    }
}
