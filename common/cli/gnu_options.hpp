// gnu_options.hpp — a GNU-style command line (--name value, --name=value, -x value) split by
// Boost.Program_options, as alertgw and alertgen read theirs. Flags the description does not
// know are kept (unregistered) for the caller to name in its own words; a flag missing its
// value, or given one it takes none of, is an std::invalid_argument naming the flag.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>

namespace actionloop::cli {

inline std::vector<boost::program_options::option> split_gnu(
    const std::vector<std::string>& args,
    const boost::program_options::options_description& flags) {
    namespace po = boost::program_options;
    namespace style = po::command_line_style;
    try {
        return po::command_line_parser(args)
            .options(flags)
            .style(style::allow_long | style::long_allow_adjacent | style::long_allow_next |
                   style::allow_short | style::allow_dash_for_short | style::short_allow_next)
            .allow_unregistered()
            .run()
            .options;
    } catch (const po::invalid_command_line_syntax& e) {
        const bool extra = e.kind() == po::invalid_command_line_syntax::extra_parameter;
        throw std::invalid_argument(e.get_option_name() +
                                    (extra ? " takes no value" : " needs a value"));
    }
}

}  // namespace actionloop::cli
